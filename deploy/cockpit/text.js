// Every text airlock gives the page is shown as text, never as markup, and in the
// terminal's escaped form. airlock's JSON already escapes names (a control byte
// as \xHH, a backslash doubled, invalid UTF-8 byte by byte); what a terminal
// would still render invisibly or reorder is escaped here as \u{XXXX}: format
// characters (category Cf, the bidirectional controls among them), line and
// paragraph separators, other default-ignorable code points, and any control
// character left. The joiners U+200C and U+200D and the variation selectors
// stay, as the path policy lets them. Since a backslash from a name is already
// doubled, the result still tells every name apart.
"use strict";

const airlockText = (function () {
    const hidden = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Bidi_Control}\p{Default_Ignorable_Code_Point}]/gu;
    const kept = /^[\u200C\u200D\uFE00-\uFE0F\u{E0100}-\u{E01EF}]$/u;

    function escape(value) {
        const text = value === undefined || value === null ? "" : String(value);
        return text.replace(hidden, ch => kept.test(ch) ? ch : "\\u{" + ch.codePointAt(0).toString(16).toUpperCase().padStart(4, "0") + "}");
    }

    // An element with attributes and children; strings become text nodes, escaped.
    function el(tag, attributes, ...children) {
        const node = document.createElement(tag);
        for (const [name, value] of Object.entries(attributes || {})) {
            if (value === undefined || value === null || value === false) continue;
            if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
            else if (name === "text") node.textContent = escape(value);
            else node.setAttribute(name, value === true ? "" : String(value));
        }
        for (const child of children.flat(Infinity)) {
            if (child === undefined || child === null || child === false) continue;
            node.append(child instanceof Node ? child : document.createTextNode(escape(child)));
        }
        return node;
    }

    return { escape, el };
})();
