// The quarantine review page: every figure and name comes from the airlock
// command's JSON, run through sudo as the service user (the rule airlock ships
// lets members of airlock-view and airlock-review run exactly these commands on
// the system root, and airlock records the person). Nothing here decides what
// the quarantine holds; it only shows airlock's answers, as text.
"use strict";

(function () {
    // `make install` rewrites these for its PREFIX, service user and root.
    const settings = { command: "/usr/local/bin/airlock", user: "airlock", root: "/var/lib/airlock" };
    const { el, escape } = airlockText;
    const pageSize = 50;
    const state = { reviewer: false, user: "", query: { reason: "", uploader: "", since: "", text: "", offset: 0 }, selected: new Set() };

    // Runs airlock with `args`; resolves with its standard output, rejects with
    // an Error whose message is airlock's own (its standard error).
    function airlock(args) {
        const argv = ["sudo", "-n", "-u", settings.user, "--", settings.command, ...args, "--root", settings.root];
        return new Promise((resolve, reject) => {
            cockpit.spawn(argv, { err: "message", environ: ["LC_ALL=C.UTF-8"] })
                .then(resolve)
                .catch((error, output) => {
                    const text = (error && error.message) || String(error);
                    const status = error && error.exit_status;
                    reject(Object.assign(new Error(text.replace(/^(airlock: )?(error: )?/gm, "").trim() || output || "airlock failed"), { status }));
                });
        });
    }

    function jsonLines(output) {
        return output.split("\n").filter(line => line.trim()).map(line => JSON.parse(line));
    }

    window.airlockRun = airlock;

    function problem(error) {
        const box = document.getElementById("problem");
        box.replaceChildren();
        if (!error) { box.hidden = true; return; }
        let text = error.message || String(error);
        if (/a password is required|not allowed to execute|may not run sudo/.test(text))
            text = `${state.user} may not review the quarantine: ask for membership of airlock-view (to look) or airlock-review (to release and purge). (${text})`;
        box.append(el("strong", {}, "airlock: "), text);
        box.hidden = false;
    }

    function size(bytes) {
        if (bytes === undefined || bytes === null) return "-";
        const units = ["B", "KiB", "MiB", "GiB", "TiB"];
        let value = Number(bytes), unit = 0;
        while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++; }
        return (unit ? value.toFixed(1) : String(value)) + " " + units[unit];
    }

    function when(iso) {
        return iso ? String(iso).replace("T", " ").replace(/\.\d+Z$/, " UTC") : "-";
    }

    function definitions(pairs) {
        return el("dl", { class: "facts" }, pairs.map(([term, value]) => [el("dt", {}, term), el("dd", {}, value)]));
    }

    function card(title, ...content) {
        return el("section", { class: "card" }, el("h2", {}, title), ...content);
    }

    function show(...nodes) {
        const page = document.getElementById("page");
        page.replaceChildren(...nodes);
    }

    // ---- Overview --------------------------------------------------------------
    async function overview() {
        show(el("h1", {}, "Overview"), el("p", { class: "muted" }, "Loading…"));
        const [status, hourly] = await Promise.all([
            airlock(["status", "--json"]).then(out => JSON.parse(out)),
            airlock(["history", "--per-hour", "--since", "7d", "--json"]).then(jsonLines),
        ]);
        const d = status.daemon;
        const confinement = status.daemon_confinement || status.confinement || {};
        const cards = el("div", { class: "cards" },
            card("Daemon", definitions([
                ["state", d.running ? `running (pid ${d.pid}, ${d.mode || "daemon"})` : "not running"],
                ["since", when(d.started_at)],
            ])),
            card("Confinement", definitions([
                ["landlock", confinement.landlock_state || "-"],
                ["seccomp", confinement.seccomp_state || "-"],
                ["decoders", confinement.decoders_withheld ? "WITHHELD: drops wait deferred" : "running"],
            ])),
            card("Queue", definitions([
                ["claimed", String(status.claimed)],
                ["waiting in the inbox", String(status.inbox_waiting)],
                ["oldest waiting", status.oldest_waiting ? `${status.oldest_waiting.drop} (${status.oldest_waiting.age_seconds} s)` : "-"],
            ])),
            card("Quarantine", definitions([
                ["entries", String(status.quarantine.entries)],
                ["size", size(status.quarantine.bytes)],
                ["free space", size(status.free_bytes)],
            ]), el("a", { href: "#/quarantine" }, "Review the quarantine")),
            card("Scanning", definitions([
                ["types", status.content.type_detection],
                ["scanning", status.content.scanning],
            ])));
        const charts = el("div", { class: "charts" });
        const now = Date.now();
        airlockChart.draw(charts, hourly, 24, "Outcomes per hour, last 24 hours", now);
        airlockChart.draw(charts, hourly, 168, "Outcomes per hour, last 7 days", now);
        show(el("h1", {}, "Overview"), cards, charts);
    }

    // ---- Quarantine list --------------------------------------------------------
    const reasons = ["unsafe-path", "unsupported-entry-type", "duplicate-path", "path-conflict", "name-collision", "name-too-long",
        "too-deep", "too-many-entries", "file-too-large", "total-too-large", "ratio-too-high", "corrupt-archive", "encrypted-entry",
        "unsupported-format", "drop-too-large", "not-regular-file", "changed-during-ingest", "unreadable-drop", "wrong-root-class",
        "unknown-class", "unsupported-schema", "invalid-field", "decoder-failed", "disallowed-type", "type-mismatch", "malware-found"];

    function listArguments() {
        const q = state.query, args = ["quarantine", "list", "--json", "--offset", String(q.offset), "--limit", String(pageSize + 1)];
        if (q.reason) args.push("--reason", q.reason);
        if (q.uploader) args.push("--uploader", q.uploader);
        if (q.since) args.push("--since", q.since);
        if (q.text) args.push("--text", q.text);
        return args;
    }

    function filterForm() {
        const q = state.query;
        const field = (label, control) => el("label", {}, el("span", {}, label), control);
        const reason = el("select", { id: "filter-reason", name: "reason" }, el("option", { value: "" }, "any reason"),
            reasons.map(r => el("option", { value: r, selected: q.reason === r }, r)));
        const since = el("select", { id: "filter-since", name: "since" },
            [["", "any time"], ["1h", "last hour"], ["24h", "last 24 hours"], ["7d", "last 7 days"], ["30d", "last 30 days"]]
                .map(([value, label]) => el("option", { value, selected: q.since === value }, label)));
        const uploader = el("input", { id: "filter-uploader", name: "uploader", type: "text", value: q.uploader, autocomplete: "off" });
        const text = el("input", { id: "filter-text", name: "text", type: "search", value: q.text, placeholder: "id, name, entry", autocomplete: "off" });
        const form = el("form", { class: "filters", role: "search" },
            field("Reason", reason), field("Uploader", uploader), field("Decided", since), field("Text", text),
            el("button", { type: "submit", id: "filter-apply" }, "Filter"));
        form.addEventListener("submit", event => {
            event.preventDefault();
            state.query = { reason: reason.value, uploader: uploader.value.trim(), since: since.value, text: text.value.trim(), offset: 0 };
            state.selected.clear();
            route();
        });
        return form;
    }

    async function quarantine() {
        show(el("h1", {}, "Quarantine"), filterForm(), el("p", { class: "muted" }, "Loading…"));
        const rows = jsonLines(await airlock(listArguments()));
        const more = rows.length > pageSize;
        const page = rows.slice(0, pageSize);
        const all = el("input", { type: "checkbox", id: "select-all", "aria-label": "Select every entry on this page" });
        const boxes = [];
        const body = el("tbody", {}, page.map(row => {
            const box = el("input", { type: "checkbox", class: "select", "aria-label": "Select " + row.id, checked: state.selected.has(row.id) });
            box.addEventListener("change", () => { box.checked ? state.selected.add(row.id) : state.selected.delete(row.id); bulk.update(); });
            boxes.push(box);
            return el("tr", { "data-id": row.id },
                el("td", {}, box),
                el("td", {}, el("a", { href: "#/entry/" + encodeURIComponent(row.id), class: "entry-link" }, row.id)),
                el("td", {}, when(row.decided_at)),
                el("td", {}, row.reason, row.released ? el("span", { class: "badge" }, "released") : null),
                el("td", { class: "name" }, row.drop),
                el("td", { class: "name" }, row.entry || ""),
                el("td", {}, row.uploader || "-"),
                el("td", { class: "number" }, size(row.size)));
        }));
        all.addEventListener("change", () => {
            boxes.forEach((box, i) => { box.checked = all.checked; all.checked ? state.selected.add(page[i].id) : state.selected.delete(page[i].id); });
            bulk.update();
        });
        const table = el("div", { class: "scroll" }, el("table", { id: "quarantine-table" },
            el("thead", {}, el("tr", {}, el("th", {}, all), ["ID", "Decided", "Reason", "Drop", "Entry", "Uploader", "Size"].map(h => el("th", { scope: "col" }, h)))),
            body));
        const q = state.query;
        const pager = el("nav", { class: "pager", "aria-label": "Pages" },
            el("button", { type: "button", id: "page-previous", disabled: q.offset === 0, onclick: () => { q.offset = Math.max(0, q.offset - pageSize); route(); } }, "Previous"),
            el("span", {}, page.length ? `${q.offset + 1}–${q.offset + page.length}` : "no entries match"),
            el("button", { type: "button", id: "page-next", disabled: !more, onclick: () => { q.offset += pageSize; route(); } }, "Next"));
        const bulk = bulkActions();
        show(el("h1", {}, "Quarantine"), filterForm(), bulk.node, table, pager);
        bulk.update();
    }

    function reasonField(id) {
        return el("input", { type: "text", id, required: true, minlength: "3", placeholder: "why (recorded in the journal)", autocomplete: "off" });
    }

    function bulkActions() {
        const note = reasonField("bulk-reason");
        const count = el("span", { id: "selected-count" });
        const purge = el("button", { type: "submit", class: "danger", id: "bulk-purge" }, "Purge selected");
        const form = el("form", { class: "bulk" }, count, note, purge);
        form.addEventListener("submit", async event => {
            event.preventDefault();
            if (!state.reviewer || !state.selected.size || !note.value.trim()) return;
            try {
                await airlock(["quarantine", "purge", ...state.selected, "--reason", note.value.trim()]);
                state.selected.clear();
                problem(null);
            } catch (error) { problem(error); }
            route();
        });
        return {
            node: form,
            update() {
                count.textContent = `${state.selected.size} selected`;
                purge.disabled = note.disabled = !state.reviewer || state.selected.size === 0;
                form.title = state.reviewer ? "" : "Release and purge are for members of airlock-review";
            },
        };
    }

    // ---- Entry ------------------------------------------------------------------
    function reportRows(value, prefix) {
        if (value !== null && typeof value === "object" && !Array.isArray(value))
            return Object.keys(value).sort().flatMap(key => reportRows(value[key], prefix ? prefix + "." + key : key));
        if (Array.isArray(value))
            return value.length ? value.flatMap((item, i) => reportRows(item, `${prefix}[${i}]`)) : [[prefix, "[]"]];
        return [[prefix, value === null ? "null" : String(value)]];
    }

    async function entry(id) {
        show(el("h1", {}, "Entry ", id), el("p", { class: "muted" }, "Loading…"));
        const report = JSON.parse(await airlock(["quarantine", "show", id, "--json"]));
        const history = jsonLines(await airlock(["history", "--id", id, "--json"]));
        const contents = el("div", { id: "contents" }, el("p", { class: "muted" }, "Listing the archive…"));
        const summary = card("Drop", definitions([
            ["drop", report.drop], ["size", size(report.size ?? report.drop_bytes)], ["sha256", report.sha256 || "-"],
            ["format", report.format || "-"], ["reason", report.reason], ["detail", report.detail],
            ["entry", report.entry === undefined ? "-" : `${report.entry}${report.entry_index !== undefined ? ` (index ${report.entry_index})` : ""}`],
            ["colliding partner", report.other_entry || "-"],
            ["uploader", report.uploader ? `${report.uploader}${report.uploader_uid !== undefined ? ` (uid ${report.uploader_uid})` : ""}` : "-"],
            ["decided", when(report.decided_at)], ["original", report.holds_drop ? "held in the quarantine" : "gone (released)"],
        ]));
        const full = card("Report in full", el("div", { class: "scroll" }, el("table", { id: "report-table" },
            el("tbody", {}, reportRows(report, "").map(([key, value]) => el("tr", {}, el("th", { scope: "row" }, key), el("td", { class: "name" }, value)))))));
        const journal = card("History", historyTable(history));
        show(el("h1", {}, "Entry ", el("span", { id: "entry-id" }, id)), el("p", {}, el("a", { href: "#/quarantine" }, "← Quarantine")),
            actions(id, report), summary, card("Contents", contents), full, journal);
        try {
            const listed = jsonLines(await airlock(["quarantine", "contents", id, "--json"]));
            contents.replaceChildren(el("div", { class: "scroll" }, el("table", { id: "contents-table" },
                el("thead", {}, el("tr", {}, ["Type", "Size", "Name"].map(h => el("th", { scope: "col" }, h)))),
                el("tbody", {}, listed.map(item => el("tr", {}, el("td", {}, item.type || item.entry_type || "-"),
                    el("td", { class: "number" }, item.size ?? item.entry_size ?? "-"),
                    el("td", { class: "name" }, item.entry + (item.link_target ? " -> " + item.link_target : ""))))))),
                el("p", { class: "muted" }, `${listed.length} entries listed from the archive's headers; nothing extracted.`));
        } catch (error) {
            contents.replaceChildren(el("p", { class: "muted" }, error.message));
        }
    }

    function actions(id, report) {
        const note = reasonField("action-reason");
        const release = el("button", { type: "button", id: "release", disabled: !report.holds_drop }, "Release to the inbox");
        const purge = el("button", { type: "button", id: "purge", class: "danger" }, "Purge");
        const outcome = el("p", { id: "action-outcome", role: "status" });
        async function act(words) {
            if (!note.value.trim()) { note.reportValidity(); note.focus(); return; }
            try {
                await airlock([...words, "--reason", note.value.trim()]);
                problem(null);
                if (words[1] === "purge") { location.hash = "#/quarantine"; return; }
                route();
            } catch (error) { problem(error); outcome.textContent = escape(error.message); }
        }
        release.addEventListener("click", () => act(["quarantine", "release", id]));
        purge.addEventListener("click", () => act(["quarantine", "purge", id]));
        if (!state.reviewer) { release.disabled = purge.disabled = note.disabled = true; }
        return card("Decide", el("div", { class: "actions" }, el("label", {}, el("span", {}, "Reason"), note), release, purge),
            state.reviewer ? null : el("p", { class: "muted", id: "viewer-note" }, `${state.user} may look but not release or purge: that is for members of airlock-review.`),
            outcome);
    }

    // ---- History ----------------------------------------------------------------
    function historyTable(records) {
        return el("div", { class: "scroll" }, el("table", { class: "history" },
            el("thead", {}, el("tr", {}, ["Time", "Event", "ID", "Drop", "Reason", "By", "Note"].map(h => el("th", { scope: "col" }, h)))),
            el("tbody", {}, records.map(r => el("tr", { "data-event": r.event },
                el("td", {}, when(r.time)), el("td", {}, r.event),
                el("td", {}, r.id ? el("a", { href: "#/entry/" + encodeURIComponent(r.id) }, r.id) : "-"),
                el("td", { class: "name" }, r.drop || "-"), el("td", {}, r.reason || ""), el("td", { class: "by" }, r.by || ""),
                el("td", { class: "name" }, r.purge_reason || r.release_reason || r.detail || ""))))));
    }

    async function historyPage() {
        show(el("h1", {}, "History"), el("p", { class: "muted" }, "Loading…"));
        const records = jsonLines(await airlock(["history", "--json", "--limit", "2000"])).reverse();
        const event = el("select", { id: "history-event" }, ["", "accepted", "rejected", "deferred", "released", "purged", "claimed", "skipped"]
            .map(e => el("option", { value: e }, e || "any event")));
        const text = el("input", { type: "search", id: "history-text", placeholder: "id, name, person", autocomplete: "off" });
        const holder = el("div");
        const render = () => {
            const needle = text.value.trim().toLowerCase();
            const shown = records.filter(r => (!event.value || r.event === event.value)
                && (!needle || [r.id, r.drop, r.by, r.reason, r.purge_reason, r.release_reason].some(v => v && String(v).toLowerCase().includes(needle))));
            holder.replaceChildren(historyTable(shown.slice(0, 500)), el("p", { class: "muted" }, `${shown.length} of the newest ${records.length} records`));
        };
        event.addEventListener("change", render);
        text.addEventListener("input", render);
        render();
        show(el("h1", {}, "History"), el("form", { class: "filters", role: "search", onsubmit: e => e.preventDefault() },
            el("label", {}, el("span", {}, "Event"), event), el("label", {}, el("span", {}, "Text"), text)), holder);
    }

    // ---- Routing ----------------------------------------------------------------
    async function route() {
        const hash = location.hash || "#/overview";
        const [, page, id] = hash.split("/");
        for (const name of ["overview", "quarantine", "history"])
            document.getElementById("nav-" + name).toggleAttribute("aria-current", page === name || (page === "entry" && name === "quarantine"));
        try {
            if (page === "quarantine") await quarantine();
            else if (page === "history") await historyPage();
            else if (page === "entry" && id) await entry(decodeURIComponent(id));
            else await overview();
            document.body.dataset.ready = page || "overview";
        } catch (error) {
            problem(error);
            show(el("h1", {}, "Could not load this page"), el("p", { class: "muted" }, error.message));
            document.body.dataset.ready = "error";
        }
    }

    async function start() {
        const user = await cockpit.user();
        state.user = user.name;
        const groups = user.groups || [];
        state.reviewer = groups.includes("airlock-review");
        document.getElementById("who").textContent = escape(`${user.name}: ${state.reviewer ? "reviewer" : groups.includes("airlock-view") ? "viewer" : "no review group"}`);
        window.addEventListener("hashchange", () => { delete document.body.dataset.ready; problem(null); route(); });
        route();
    }

    document.addEventListener("DOMContentLoaded", () => { start().catch(problem); });
})();
