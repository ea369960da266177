// Outcomes per hour, stacked by reason, as SVG built element by element: no
// library, no markup strings. Rows are `history --per-hour --json` lines.
"use strict";

const airlockChart = (function () {
    const SVG = "http://www.w3.org/2000/svg";
    const palette = ["#0066cc", "#c9190b", "#f0ab00", "#3e8635", "#8476d1", "#009596", "#ec7a08", "#7d1007", "#6753ac", "#4cb140"];

    function svg(tag, attributes) {
        const node = document.createElementNS(SVG, tag);
        for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
        return node;
    }

    function series(row) {
        return row.event === "rejected" ? row.reason || "rejected" : row.event;
    }

    // The hour (ms since the epoch) a row's "2026-12-01T12:00Z" names.
    function hourOf(row) {
        return Date.parse(row.hour.replace(/Z$/, ":00Z"));
    }

    // Draws `hours` bars ending with the current hour into `container`.
    function draw(container, rows, hours, title, now) {
        const end = Math.floor(now / 3600000) * 3600000;
        const start = end - (hours - 1) * 3600000;
        const wanted = rows.filter(r => r.event === "accepted" || r.event === "rejected");
        const names = [...new Set(wanted.map(series))].sort((a, b) => a === "accepted" ? -1 : b === "accepted" ? 1 : a.localeCompare(b));
        const buckets = new Array(hours).fill(null).map(() => ({}));
        for (const row of wanted) {
            const index = Math.round((hourOf(row) - start) / 3600000);
            if (index < 0 || index >= hours) continue;
            buckets[index][series(row)] = (buckets[index][series(row)] || 0) + row.count;
        }
        const totals = buckets.map(b => Object.values(b).reduce((x, y) => x + y, 0));
        const top = Math.max(1, ...totals);
        const width = 720, height = 200, left = 40, bottom = 24, plot = height - bottom - 8;
        const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", class: "chart", preserveAspectRatio: "none" });
        const label = svg("title", {});
        label.textContent = `${title}: ${totals.reduce((x, y) => x + y, 0)} outcomes`;
        chart.append(label);
        const step = (width - left) / hours;
        for (const fraction of [0, 0.5, 1]) {
            const y = 8 + plot - plot * fraction;
            chart.append(svg("line", { x1: left, x2: width, y1: y, y2: y, class: "grid" }));
            const tick = svg("text", { x: left - 4, y: y + 4, class: "tick", "text-anchor": "end" });
            tick.textContent = String(Math.round(top * fraction));
            chart.append(tick);
        }
        buckets.forEach((bucket, index) => {
            let y = 8 + plot;
            names.forEach((name, n) => {
                const count = bucket[name] || 0;
                if (!count) return;
                const h = plot * count / top;
                y -= h;
                const bar = svg("rect", { x: left + index * step + step * 0.1, y, width: Math.max(1, step * 0.8), height: h, fill: palette[n % palette.length] });
                const tip = svg("title", {});
                tip.textContent = airlockText.escape(`${new Date(start + index * 3600000).toISOString().slice(0, 13)}:00Z ${name}: ${count}`);
                bar.append(tip);
                chart.append(bar);
            });
            const every = hours <= 24 ? 6 : 24;
            if (index % every === 0) {
                const tick = svg("text", { x: left + index * step, y: height - 6, class: "tick" });
                const at = new Date(start + index * 3600000).toISOString();
                tick.textContent = hours <= 24 ? at.slice(11, 16) : at.slice(5, 10);
                chart.append(tick);
            }
        });
        const legend = airlockText.el("ul", { class: "legend" },
            names.map((name, n) => airlockText.el("li", {},
                airlockText.el("span", { class: "swatch", "data-colour": String(n % palette.length) }), name)));
        container.append(airlockText.el("figure", { class: "figure" }, airlockText.el("figcaption", {}, title), chart, legend));
    }

    return { draw, palette };
})();
