/* skill-eval report viewer: reads the inline payload (gzip + base64 JSON: the
 * report model, the calibration plot's Vega spec), renders the zones, the plot
 * (vega-embed, SVG), the sortable and filterable table, and a detail view per
 * probe version. Every text from the model is set as text, never as HTML.
 * The URL's hash holds the view (URLSearchParams): the filters (skill, agent,
 * model, zone, flag, probe, q: the full-text search), sort (a column, "-" first
 * when descending), series (the plot's agent · model), and the detail shown:
 * g=KEY a group (s=START_ID one of its starts), m=ID the groups of a plot mark. */
(function () {
  "use strict";

  var state = {
    model: null, payload: null, byKey: new Map(), marks: new Map(), view: null,
    filters: { skill: "", agent: "", model: "", zone: "", flag: "", text: "", q: "" },
    sort: { column: "probe", direction: 1 }, constants: {}, index: [], series: "", focusStart: null, timing: null,
    appliedHash: null,
  };
  var ready = {};
  ready.promise = new Promise(function (resolve, reject) { ready.resolve = resolve; ready.reject = reject; });
  window.skillEvalReport = { state: state, ready: ready.promise };

  // -- small DOM helpers ----------------------------------------------------------

  function el(tag, attributes) {
    var node = document.createElement(tag);
    var key;
    for (key in attributes || {}) {
      if (!Object.prototype.hasOwnProperty.call(attributes, key) || attributes[key] == null || attributes[key] === false) continue;
      if (key === "text") node.textContent = attributes[key];
      else if (key === "className") node.className = attributes[key];
      else if (key === "onclick") node.addEventListener("click", attributes[key]);
      else if (key === "style") node.setAttribute("style", attributes[key]);
      else node.setAttribute(key, attributes[key] === true ? "" : attributes[key]);
    }
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }

  function append(node, child) {
    if (child == null || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { append(node, c); }); return; }
    node.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

  // -- formatting -----------------------------------------------------------------

  function fixed(value, digits) { return value == null ? "-" : Number(value).toFixed(digits); }
  function integer(value) { return value == null ? "-" : Number(value).toLocaleString("en"); }
  function shortTime(iso) { return iso ? iso.replace("T", " ").replace(/:\d\d(\.\d+)?Z$/, "Z") : "-"; }
  function seriesName(group) { return group.agent + " · " + group.model; }

  function armText(arm) {
    var text = arm.reps ? arm.caught + "/" + arm.reps + " [" + fixed(arm.wilson95[0], 2) + "–" + fixed(arm.wilson95[1], 2) + "]" : "-";
    var failed = arm.errors + arm.timeouts + arm.interrupted;
    return failed ? text + " +" + failed + " failed" : text;
  }

  /* An arm's cell: counts, interval and failed starts, each kept on one line. */
  function armCell(arm) {
    if (!arm.reps && !(arm.errors + arm.timeouts + arm.interrupted)) return "-";
    var failed = arm.errors + arm.timeouts + arm.interrupted;
    return [arm.reps ? [el("span", { className: "piece", text: arm.caught + "/" + arm.reps }), " ",
      el("span", { className: "piece interval", text: "[" + fixed(arm.wilson95[0], 2) + "–" + fixed(arm.wilson95[1], 2) + "]" })] : "-",
      failed ? [" ", el("span", { className: "piece", text: "+" + failed + " failed" })] : null];
  }

  function zoneBadge(zone) {
    var colour = (state.payload.zone_colours || {})[zone] || "#999";
    return el("span", { className: "zone", style: "--zone-colour:" + colour, title: state.payload.zone_titles[zone] || zone, text: zone });
  }

  function pValue(evidence) { return evidence.p == null ? null : evidence.p; }

  function failedStarts(group) {
    var a = group.arms.control, b = group.arms.treatment;
    return a.errors + a.timeouts + a.interrupted + b.errors + b.timeouts + b.interrupted;
  }

  function unresolved(group) { return group.arms.control.unresolved + group.arms.treatment.unresolved; }

  function lintErrors(group) {
    return group.lint ? group.lint.findings.filter(function (f) { return f.severity === "error"; }).length : 0;
  }

  /* Most graded reps' answers had no field the output spec names (or a zone
   * of the model says so, when it has one). */
  function answersUnreadable(group) {
    return group.zone === "unreadable" || !!(group.answers_unreadable && group.answers_unreadable.most);
  }

  function regressionControl(group) {
    return (group.calibration ? group.calibration.zone : group.zone) === "ceiling";
  }

  function flags(group) {
    var out = [];
    if (group.calibration) out.push(el("span", { className: "flag calibrated", title: "the latest skill-eval calibrate decision", text: "calibrated: " + group.calibration.zone }));
    if (group.edited_without_bump) out.push(el("span", { className: "flag bad", title: "another group has this id and version with other probe.json or artifact hashes", text: "edited without version bump" }));
    if (group.frozen) out.push(el("span", { className: "flag " + (group.frozen_matches ? "ok" : "bad"), text: group.frozen_matches ? "frozen" : "frozen, hashes differ" }));
    if (group.on_disk !== "current") out.push(el("span", { className: "flag warn", text: "on disk: " + group.on_disk }));
    if (unresolved(group)) out.push(el("span", { className: "flag bad", text: unresolved(group) + " rep(s) without outcome" }));
    var skillFlags = group.starts.map(function (s) { return s.skill_flag; });
    var unused = skillFlags.filter(function (f) { return f === "skill-not-loaded"; }).length;
    var leaked = skillFlags.filter(function (f) { return f === "isolation-failure"; }).length;
    var contaminated = group.starts.filter(function (s) { return s.contaminated && s.contaminated.length; }).length;
    if (unused) out.push(el("span", { className: "flag bad", text: unused + " treatment start(s) never loaded the skill" }));
    if (leaked) out.push(el("span", { className: "flag bad", text: "isolation failure: " + leaked + " control start(s) loaded the skill" }));
    if (contaminated) out.push(el("span", { className: "flag bad", text: contaminated + " contaminated start(s)" }));
    if (group.unsealed) out.push(el("span", { className: "flag bad", "data-flag": "unsealed",
      title: "starts run without the sandbox (sandbox: off): their agent could read the answer keys", text: group.unsealed + " unsealed start(s)" }));
    if (lintErrors(group)) out.push(el("span", { className: "flag bad", text: lintErrors(group) + " lint error(s)" }));
    if (answersUnreadable(group)) {
      var u = group.answers_unreadable;
      out.push(el("span", { className: "flag bad", "data-flag": "unreadable", title: "most graded reps' answers had no field the output spec names (answer_source: none)",
        text: "answers unreadable" + (u ? " " + u.unreadable + "/" + u.graded : "") }));
    }
    return out;
  }

  // -- loading --------------------------------------------------------------------

  function decodePayload() {
    var node = document.getElementById("payload");
    var binary = atob(node.textContent.trim());
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  // -- header and zones -----------------------------------------------------------

  function renderHeader() {
    var meta = state.model.meta;
    var cap = meta.max_starts == null ? "no [calibration] max-starts cap" : "max-starts " + integer(meta.max_starts);
    var meta_node = document.getElementById("meta");
    append(meta_node, ["Workspace ", el("code", { text: meta.workspace }), ". Built " + meta.generated + " by " + meta.tool + ". ",
      integer(meta.starts_on_record) + " starts on record (" + cap + "; failed starts and " + integer(meta.torn_lines) +
      " torn line(s) included). " + integer(state.model.groups.length) + " probe version(s) × agent × model."]);
    document.getElementById("note").textContent = meta.note;
  }

  function seriesList() {
    var seen = new Map();
    state.model.groups.forEach(function (g) {
      var name = seriesName(g);
      if (!seen.has(name)) seen.set(name, { agent: g.agent, model: g.model, groups: [] });
      seen.get(name).groups.push(g);
    });
    return Array.from(seen.entries()).sort(function (a, b) { return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0; });
  }

  function renderZones() {
    var zones = state.payload.zones;
    var table = clear(document.getElementById("zones"));
    var head = el("tr", null, el("th", { text: "agent" }), el("th", { text: "model" }),
      zones.map(function (z) { return el("th", { className: "num" }, zoneBadge(z)); }),
      el("th", { className: "num", text: "total" }), el("th", { className: "num", title: "one-sided Fisher p < " + state.model.meta.alpha, text: "separated" }),
      el("th", { className: "num", text: "reps without outcome" }));
    table.appendChild(el("thead", null, head));
    var body = el("tbody");
    seriesList().forEach(function (entry) {
      var info = entry[1];
      var counts = {};
      info.groups.forEach(function (g) { counts[g.zone] = (counts[g.zone] || 0) + 1; });
      var row = el("tr", { "data-series": entry[0] }, el("td", { text: info.agent }), el("td", { text: info.model }));
      zones.forEach(function (z) {
        var n = counts[z] || 0;
        row.appendChild(el("td", { className: "num" }, el("button", {
          className: "count", type: "button", disabled: n === 0, "data-zone": z, text: String(n),
          title: "show the " + z + " probe versions of " + entry[0],
          onclick: function () { setFilters({ agent: info.agent, model: info.model, zone: z }); },
        })));
      });
      row.appendChild(el("td", { className: "num", text: integer(info.groups.length) }));
      row.appendChild(el("td", { className: "num", text: integer(info.groups.filter(function (g) { return g.evidence.separated; }).length) }));
      row.appendChild(el("td", { className: "num", text: integer(info.groups.reduce(function (s, g) { return s + unresolved(g); }, 0)) }));
      body.appendChild(row);
    });
    table.appendChild(body);
  }

  // -- the calibration plot -------------------------------------------------------

  function plotCaption(series) {
    var plot = state.payload.plot;
    var plotted = plot.plotted[series] || 0, unplotted = plot.unplotted[series] || 0;
    var marks = Array.from(state.marks.values()).filter(function (m) { return m.series === series; }).length;
    return plotted + " probe version(s) of " + series + " drawn as " + marks + " mark(s): a mark stands for every version at its " +
      "rates (its area grows with their number; hover to name them, click to open them). Bars: Wilson 95% intervals. " +
      (unplotted ? unplotted + " version(s) of it are not drawn: an arm has no graded rep (table flag \u201cnot in the plot\u201d)." : "Every version of this agent and model is drawn.");
  }

  function renderPlot() {
    var plot = state.payload.plot;
    var select = document.getElementById("series");
    plot.series.forEach(function (s) { select.appendChild(el("option", { value: s, text: s })); });
    plot.spec.data.forEach(function (d) { if (d.name === "marks_data") d.values.forEach(function (m) { state.marks.set(m.id, m); }); });
    if (!plot.series.length) {
      document.getElementById("plot-caption").textContent = "No runs on record: run `skill-eval run` first.";
      return Promise.resolve();
    }
    select.value = plot.shown_first;
    document.getElementById("plot-caption").textContent = plotCaption(plot.shown_first);
    return vegaEmbed("#plot", plot.spec, { mode: "vega", renderer: "svg", actions: false, tooltip: { theme: "light" } }).then(function (result) {
      state.view = result.view;
      result.view.addEventListener("click", function (event, item) {
        if (!item || !item.mark || (item.mark.name !== "points" && item.mark.name !== "labels")) return;
        var datum = item.datum;  // a point's datum is its mark; a label's, its slot's point's mark
        while (datum && !datum.groups) datum = datum.datum;
        if (!datum) return;
        location.hash = hashFor(datum.count === 1 ? { g: datum.groups[0] } : { m: datum.id });
      });
      select.addEventListener("change", function () { setSeries(select.value); writeHash(); });
    });
  }

  function setSeries(series) {
    state.series = series;
    document.getElementById("series").value = series;
    document.getElementById("plot-caption").textContent = plotCaption(series);
    if (state.view) state.view.signal("series", series).runAsync();
  }

  // -- the table ------------------------------------------------------------------

  /* Columns whose value can be the same on every row shown (``collapsible``)
   * are then named once above the table instead (``#table-constants``). */
  var COLUMNS = [
    { id: "skill", title: "skill", collapsible: true, className: "wrap", value: function (g) { return g.skill || ""; } },
    { id: "probe", title: "probe", className: "wrap id", value: function (g) { return g.probe; },
      cell: function (g) { return el("a", { className: "probe", href: "#" + hashFor({ g: g.key }), text: g.probe }); } },
    { id: "version", title: "v", num: true, value: function (g) { return g.version; } },
    { id: "agent", title: "agent", collapsible: true, className: "wrap", value: function (g) { return g.agent; } },
    { id: "model", title: "model", collapsible: true, className: "wrap", value: function (g) { return g.model; } },
    { id: "zone", title: "zone", value: function (g) { return state.payload.zones.indexOf(g.zone); }, cell: function (g) { return zoneBadge(g.zone); } },
    { id: "control", title: "control", num: true, className: "arm", value: function (g) { return g.arms.control.rate == null ? -1 : g.arms.control.rate; }, cell: function (g) { return armCell(g.arms.control); } },
    { id: "treatment", title: "treatment", num: true, className: "arm", value: function (g) { return g.arms.treatment.rate == null ? -1 : g.arms.treatment.rate; }, cell: function (g) { return armCell(g.arms.treatment); } },
    { id: "p", title: "Fisher p", num: true, className: "arm", value: function (g) { var p = pValue(g.evidence); return p == null ? 2 : p; },
      cell: function (g) { return el("span", { title: g.evidence.text }, g.evidence.p == null ? "-" : Number(g.evidence.p).toPrecision(2),
        g.evidence.separated ? [" ", el("span", { className: "piece", text: "separated" })] : null); } },
    { id: "starts", title: "starts", num: true, value: function (g) { return g.starts.length; } },
    { id: "failed", title: "failed", num: true, value: failedStarts },
    { id: "flags", title: "flags", className: "flags", value: function (g) { return (g.edited_without_bump ? 4 : 0) + (g.frozen ? 2 : 0) + (unresolved(g) ? 1 : 0); }, cell: flags },
    { id: "last_run", title: "last run", className: "wrap", value: function (g) { return g.last_run || ""; }, cell: function (g) { return shortTime(g.last_run); } },
  ];
  var COLUMN_IDS = COLUMNS.map(function (c) { return c.id; });

  var FLAGS = {
    edited: ["edited without version bump", function (g) { return g.edited_without_bump; }],
    frozen: ["frozen", function (g) { return g.frozen; }],
    unfrozen: ["not frozen", function (g) { return !g.frozen; }],
    unresolved: ["reps without outcome", function (g) { return unresolved(g) > 0; }],
    failed: ["failed starts", function (g) { return failedStarts(g) > 0; }],
    lint: ["lint errors", function (g) { return lintErrors(g) > 0; }],
    separated: ["separated", function (g) { return g.evidence.separated; }],
    moved: ["not current on disk", function (g) { return g.on_disk !== "current"; }],
    unplotted: ["not in the plot", function (g) { return !g.arms.control.reps || !g.arms.treatment.reps; }],
    calibrated: ["calibrated", function (g) { return !!g.calibration; }],
    control: ["regression/cost controls (ceiling)", regressionControl],
    unreadable: ["answers unreadable (most graded reps)", answersUnreadable],
    unsealed: ["unsealed starts (ran without the sandbox)", function (g) { return g.unsealed > 0; }],
  };

  var SELECTS = ["skill", "agent", "model", "zone", "flag"];
  var EMPTY_FILTERS = { skill: "", agent: "", model: "", zone: "", flag: "", text: "", q: "" };

  function fillSelect(id, values, labels) {
    var select = document.getElementById(id);
    select.appendChild(el("option", { value: "", text: "all" }));
    values.forEach(function (v, i) { select.appendChild(el("option", { value: v, text: labels ? labels[i] : v })); });
    select.addEventListener("change", function () { state.filters[select.dataset.field] = select.value; filtersChanged(); });
  }

  function distinct(field) {
    return Array.from(new Set(state.model.groups.map(function (g) { return g[field] || ""; }))).sort();
  }

  function renderFilters() {
    fillSelect("filter-skill", distinct("skill"));
    fillSelect("filter-agent", distinct("agent"));
    fillSelect("filter-model", distinct("model"));
    fillSelect("filter-zone", state.payload.zones);
    var flagKeys = Object.keys(FLAGS);
    fillSelect("filter-flag", flagKeys, flagKeys.map(function (k) { return FLAGS[k][0]; }));
    var text = document.getElementById("filter-text");
    text.addEventListener("input", function () { state.filters.text = text.value; filtersChanged(); });
    var search = document.getElementById("filter-search");
    var pending = null;
    search.addEventListener("input", function () {
      clearTimeout(pending);  // typing: search once the keys pause
      pending = setTimeout(function () { state.filters.q = search.value; filtersChanged(); }, 120);
    });
    search.addEventListener("keydown", function (event) {
      if (event.key === "Enter") { clearTimeout(pending); state.filters.q = search.value; filtersChanged(); }
    });
    document.getElementById("filter-reset").addEventListener("click", function () { setFilters(EMPTY_FILTERS); });
  }

  function showFilters() {
    SELECTS.forEach(function (k) { document.getElementById("filter-" + k).value = state.filters[k]; });
    document.getElementById("filter-text").value = state.filters.text;
    document.getElementById("filter-search").value = state.filters.q;
  }

  function setFilters(values) {
    Object.keys(values).forEach(function (k) { state.filters[k] = values[k]; });
    showFilters();
    filtersChanged();
    document.getElementById("table-section").scrollIntoView();
  }

  function filtersChanged() {
    renderRows();
    writeHash();
  }

  function passes(group) {
    var f = state.filters;
    if (f.skill && (group.skill || "") !== f.skill) return false;
    if (f.agent && group.agent !== f.agent) return false;
    if (f.model && group.model !== f.model) return false;
    if (f.zone && group.zone !== f.zone) return false;
    if (f.flag && FLAGS[f.flag] && !FLAGS[f.flag][1](group)) return false;
    if (f.text && group.probe.toLowerCase().indexOf(f.text.toLowerCase()) < 0) return false;
    return true;
  }

  function renderHead() {
    var row = clear(document.getElementById("groups-head"));
    COLUMNS.forEach(function (column) {
      if (state.constants[column.id] !== undefined) return;
      var sorted = state.sort.column === column.id;
      row.appendChild(el("th", {
        className: column.num ? "num" : null, "data-column": column.id,
        "aria-sort": sorted ? (state.sort.direction > 0 ? "ascending" : "descending") : "none",
      }, el("button", { type: "button", text: column.title, onclick: function () {
        state.sort = { column: column.id, direction: sorted ? -state.sort.direction : 1 };
        renderHead();
        renderRows();
        writeHash();
      } })));
    });
  }

  function compare(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  /* The values of collapsible columns that are the same on every row shown. */
  function constantsOf(rows) {
    var found = {};
    if (!rows.length) return found;
    COLUMNS.forEach(function (column) {
      if (!column.collapsible) return;
      var first = column.value(rows[0]);
      if (rows.every(function (g) { return column.value(g) === first; })) found[column.id] = first;
    });
    return found;
  }

  function renderConstants() {
    var node = clear(document.getElementById("table-constants"));
    var ids = Object.keys(state.constants);
    node.hidden = !ids.length;
    if (!ids.length) return;
    append(node, ["Every row shown: "]);
    ids.forEach(function (id, i) {
      append(node, [i ? " · " : "", id + " ", el("strong", { "data-constant": id, text: state.constants[id] || "-" })]);
    });
  }

  function renderRows() {
    var started = performance.now();
    var search = runSearch();
    var searched = performance.now();
    var column = COLUMNS.filter(function (c) { return c.id === state.sort.column; })[0] || COLUMNS[1];
    var direction = state.sort.direction;
    var rows = state.model.groups.filter(function (g) { return passes(g) && (!search || search.groups.has(g.key)); }).sort(function (a, b) {
      return direction * compare(column.value(a), column.value(b)) || compare(a.probe, b.probe) || a.version - b.version ||
        compare(a.agent + a.model, b.agent + b.model) || compare(a.key, b.key);
    });
    var constants = constantsOf(rows);
    if (JSON.stringify(constants) !== JSON.stringify(state.constants)) {
      state.constants = constants;
      renderHead();
    }
    renderConstants();
    var shown = COLUMNS.filter(function (c) { return constants[c.id] === undefined; });
    var body = clear(document.querySelector("#groups tbody"));
    var fragment = document.createDocumentFragment();
    rows.forEach(function (g) {
      var row = el("tr", { "data-key": g.key });
      shown.forEach(function (c) {
        row.appendChild(el("td", { className: [c.num ? "num" : "", c.className || ""].join(" ").trim() || null, "data-column": c.id },
          c.cell ? c.cell(g) : String(c.value(g))));
      });
      row.addEventListener("click", function (event) {
        event.preventDefault();  // the probe's link too: its address is the view as it is now
        location.hash = hashFor({ g: g.key });
      });
      fragment.appendChild(row);
    });
    body.appendChild(fragment);
    document.getElementById("filter-count").textContent = "showing " + rows.length + " of " + state.model.groups.length;
    renderSearchResults(search, rows);
    state.timing = { search_ms: searched - started, rows_ms: performance.now() - searched };
  }

  // -- full-text search over answers, errors and quotes ------------------------------

  /* Every searchable text: each start's answer, error and stderr tail, and each
   * defect's quote, with where it comes from. Built once. */
  function buildIndex() {
    var index = [];
    state.model.groups.forEach(function (g) {
      g.starts.forEach(function (s) {
        if (s.answer && s.answer.text) index.push({ group: g, start: s, field: "answer", text: s.answer.text });
        if (s.error) index.push({ group: g, start: s, field: "error", text: s.error });
        if (s.stderr_tail) index.push({ group: g, start: s, field: "stderr", text: s.stderr_tail });
      });
      (g.probe_content ? g.probe_content.defects : []).forEach(function (d) {
        if (d.quote) index.push({ group: g, start: null, field: "quote", defect: d.id, text: d.quote });
      });
    });
    state.index = index;
  }

  function escapeRegExp(text) { return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }

  /* The query's terms, each a case-insensitive pattern: words, or "quoted
   * phrases"; whitespace in a phrase matches any run of whitespace. */
  function searchTerms(query) {
    var terms = [], pattern = /"([^"]*)"?|(\S+)/g, match;
    while ((match = pattern.exec(query))) {
      var term = (match[1] != null ? match[1] : match[2]).trim();
      if (term) terms.push(term.split(/\s+/).map(escapeRegExp).join("\\s+"));
    }
    return terms.map(function (t) { return new RegExp(t, "iu"); });
  }

  /* The texts of the groups passing the other filters in which every term
   * occurs; null without a query. */
  function runSearch() {
    var query = state.filters.q.trim();
    if (!query) return null;
    var terms = searchTerms(query);
    var hits = [], groups = new Set();
    state.index.forEach(function (entry) {
      if (!passes(entry.group)) return;
      for (var i = 0; i < terms.length; i++) if (!terms[i].test(entry.text)) return;
      hits.push(entry);
      groups.add(entry.group.key);
    });
    return { terms: terms, hits: hits, groups: groups };
  }

  /* ``text`` as text nodes, with each match of ``terms`` in a <mark>. */
  function highlighted(text, terms, className) {
    var ranges = [];
    (terms || []).forEach(function (term) {
      var global = new RegExp(term.source, "giu"), match;
      while ((match = global.exec(text))) {
        if (!match[0].length) { global.lastIndex++; continue; }
        ranges.push([match.index, match.index + match[0].length]);
      }
    });
    return marked(text, ranges.map(function (r) { return { start: r[0], end: r[1], className: className || "hit" }; }));
  }

  /* ``text`` split into text nodes and <mark> elements at ``ranges`` (start,
   * end, className, attributes); a range overlapping an earlier one is cut. */
  function marked(text, ranges) {
    ranges = ranges.slice().sort(function (a, b) { return a.start - b.start || b.end - a.end; });
    var out = [], at = 0;
    ranges.forEach(function (r) {
      var start = Math.max(r.start, at), end = Math.min(r.end, text.length);
      if (end <= start) return;
      if (start > at) out.push(text.slice(at, start));
      out.push(el("mark", Object.assign({ className: r.className, text: text.slice(start, end) }, r.attributes || {})));
      at = end;
    });
    if (at < text.length) out.push(text.slice(at));
    return out;
  }

  function snippet(text, terms) {
    var first = terms[0].exec(text), at = first ? first.index : 0;
    var from = Math.max(0, at - 60), to = Math.min(text.length, at + 140);
    var piece = (from ? "…" : "") + text.slice(from, to).replace(/\s+/g, " ") + (to < text.length ? "…" : "");
    return highlighted(piece, terms);
  }

  var RESULTS_SHOWN = 100;

  function renderSearchResults(search, rows) {
    var section = document.getElementById("search-results");
    var list = clear(document.getElementById("search-hits"));
    var summary = document.getElementById("search-summary");
    section.hidden = !search;
    if (!search) return;
    var starts = new Set(search.hits.filter(function (h) { return h.start; }).map(function (h) { return h.start; }));
    var quotes = search.hits.filter(function (h) { return !h.start; }).length;
    summary.textContent = starts.size + " start(s) and " + quotes + " quote(s) match in " + rows.length + " probe version(s)" +
      (search.hits.length > RESULTS_SHOWN ? "; the first " + RESULTS_SHOWN + " are listed" : "") + ".";
    search.hits.slice(0, RESULTS_SHOWN).forEach(function (hit) {
      var g = hit.group;
      var where = hit.start ? hit.start.arm + " rep " + (hit.start.rep == null ? "?" : hit.start.rep) + " · " + hit.field
        : "quote of " + hit.defect;
      var target = hit.start ? { g: g.key, s: hit.start.start_id || "" } : { g: g.key };
      list.appendChild(el("li", { "data-key": g.key, "data-start": hit.start ? hit.start.start_id || "" : null, "data-field": hit.field },
        el("a", { href: "#" + hashFor(target), className: "hit-link" },
          el("strong", { text: g.probe + " v" + g.version }), " · " + seriesName(g) + " · " + where),
        el("div", { className: "snippet" }, snippet(hit.text, search.terms))));
    });
  }

  // -- the URL: every filter, the sort, the search, the plot's series and the open detail --

  var HASH_FILTERS = { skill: "skill", agent: "agent", model: "model", zone: "zone", flag: "flag", text: "probe", q: "q" };

  /* The URL hash of the current view, with ``open`` (g: a group, m: a plot
   * mark, s: a start of the group) as the detail to show. */
  function hashFor(open) {
    var params = new URLSearchParams();
    Object.keys(HASH_FILTERS).forEach(function (k) { if (state.filters[k]) params.set(HASH_FILTERS[k], state.filters[k]); });
    if (state.sort.column !== "probe" || state.sort.direction !== 1) params.set("sort", (state.sort.direction < 0 ? "-" : "") + state.sort.column);
    if (state.series && state.series !== state.payload.plot.shown_first) params.set("series", state.series);
    ["g", "m", "s"].forEach(function (k) { if (open && open[k]) params.set(k, open[k]); });
    return params.toString();
  }

  function openedNow() {
    var detail = document.getElementById("detail");
    if (detail.hidden) return null;
    var open = {};
    open[detail.dataset.kind === "mark" ? "m" : "g"] = detail.dataset.id;
    if (state.focusStart) open.s = state.focusStart;
    return open;
  }

  /* Keep the URL in step with the view, without a history entry per keystroke. */
  function writeHash() {
    var hash = hashFor(openedNow());
    state.appliedHash = hash;
    if (location.hash.replace(/^#/, "") === hash) return;
    history.replaceState(null, "", location.pathname + location.search + (hash ? "#" + hash : ""));
  }

  /* The hash's parameters; the links of reports before filters were kept
   * (#g=KEY, #m=ID) read the same way. */
  function readHash() { return new URLSearchParams(location.hash.replace(/^#/, "")); }

  /* Set the view from the URL: filters, sort, search, series, then the
   * detail. Back and Forward fire popstate and hashchange for one step: an
   * event for the address already applied is ignored. */
  function applyHash(event) {
    if (event && location.hash.replace(/^#/, "") === state.appliedHash) return;
    state.appliedHash = location.hash.replace(/^#/, "");
    var params = readHash();
    var filters = {};
    Object.keys(HASH_FILTERS).forEach(function (k) { filters[k] = params.get(HASH_FILTERS[k]) || ""; });
    var sortText = params.get("sort") || "probe";
    var sort = { column: sortText.replace(/^-/, ""), direction: sortText.charAt(0) === "-" ? -1 : 1 };
    if (COLUMN_IDS.indexOf(sort.column) < 0) sort = { column: "probe", direction: 1 };
    var changed = JSON.stringify(filters) !== JSON.stringify(state.filters) ||
      sort.column !== state.sort.column || sort.direction !== state.sort.direction;
    if (changed) {
      state.filters = filters;
      state.sort = sort;
      showFilters();
      renderHead();
      renderRows();
    }
    var series = params.get("series") || state.payload.plot.shown_first;
    if (series !== state.series && state.payload.plot.series.indexOf(series) >= 0) setSeries(series);
    state.focusStart = params.get("s") || null;
    if (params.get("g")) openGroup(params.get("g"));
    else if (params.get("m")) openMark(params.get("m"));
    else closeDetail();
  }

  // -- the detail view ------------------------------------------------------------

  function facts(pairs) {
    var dl = el("dl", { className: "facts" });
    pairs.forEach(function (p) { if (p) { dl.appendChild(el("dt", { text: p[0] })); dl.appendChild(el("dd", null, p[1])); } });
    return dl;
  }

  function armFacts(arm) {
    var text = armText(arm);
    var parts = [arm.starts + " start(s)"];
    if (arm.errors) parts.push(arm.errors + " error");
    if (arm.timeouts) parts.push(arm.timeouts + " timeout");
    if (arm.interrupted) parts.push(arm.interrupted + " interrupted");
    if (arm.running) parts.push(arm.running + " running now");
    if (arm.unresolved) parts.push(arm.unresolved + " rep(s) without outcome");
    if (arm.skill_loaded + arm.skill_not_loaded) parts.push("skill loaded in " + arm.skill_loaded + " of " + (arm.skill_loaded + arm.skill_not_loaded) + " start(s) that tell");
    if (arm.contaminated) parts.push(arm.contaminated + " contaminated");
    return text + " — " + parts.join(", ");
  }

  /* pass@k of each arm, for k up to its graded reps (at most 5):
   * "pass@k control 1: 0.50, 2: 1.00; treatment 1: 1.00, 2: 1.00". */
  function passAtKText(group) {
    var parts = ["control", "treatment"].map(function (name) {
      var at = group.arms[name].pass_at_k || {};
      var ks = Object.keys(at).sort(function (a, b) { return Number(a) - Number(b); });
      return ks.length ? name + " " + ks.map(function (k) { return k + ": " + fixed(at[k], 2); }).join(", ") : null;
    }).filter(Boolean);
    return parts.length ? "pass@k " + parts.join("; ") : "";
  }

  function ruleText(rule) {
    if (!rule) return "not on record";
    var cap = rule["max-starts-per-probe"];
    return "reps " + (rule.reps == null ? "?" : rule.reps) + ", " + (rule["caught-in-every-rep"] || "?") + ", " +
      (cap == null ? "no per-probe cap" : "max-starts-per-probe " + cap);
  }

  function renderCalibration(group) {
    var c = group.calibration;
    var section = el("section", { className: "calibration" });
    section.appendChild(el("h3", { text: "Calibration decision" }));
    var starts = c.starts == null ? "-" : c.starts + " start(s)";
    if (c.version_starts != null && c.version_starts !== c.starts) starts += " (" + c.version_starts + " for the probe version, every content)";
    var pairs = [
      ["observed", el("span", { "data-fact": "zone" }, zoneBadge(c.zone), c.decided_after ? " after the " + c.decided_after : "")],
      ["starts it cost", el("span", { "data-fact": "starts", text: starts })],
      ["rule", el("span", { "data-fact": "rule" }, ruleText(c.calibration_rule) + " · sha256 ",
        el("code", { title: c.calibration_rule_sha256 || "", text: c.calibration_rule_sha256 || "-" }))],
      ["decided", c.decided || "-"],
    ];
    if (c.regression_control) pairs.push(["kept as", el("span", { "data-fact": "control", text: "a regression/cost control (a ceiling is kept, never erased)" })]);
    if (c.reason) pairs.push(["stopped", el("span", { "data-fact": "reason", text: c.reason })]);
    if (c.discriminator) {
      var hints = Object.keys(c.discriminator.transcripts_catching).map(function (defect) {
        var paths = c.discriminator.transcripts_catching[defect];
        return el("li", null, paths.length ? "known transcripts catching " + defect + ": " + paths.join(", ")
          : "no known transcript covers " + defect);
      });
      pairs.push(["check the discriminator", el("ul", { className: "discriminator", "data-fact": "discriminator" }, hints)]);
    }
    section.appendChild(facts(pairs));
    return section;
  }

  function expectationText(expected) { return typeof expected === "string" ? JSON.stringify(expected) : JSON.stringify(expected); }

  function skillUse(start) {
    var said = start.skill_loaded === true ? "loaded" : start.skill_loaded === false ? "not loaded" : "unknown";
    var flag = start.skill_flag === "isolation-failure" ? " — isolation failure: the control loaded the skill"
      : start.skill_flag === "skill-not-loaded" ? " — the treatment never loaded the skill" : "";
    return el("p", { className: "skill-use" + (start.skill_flag ? " failed" : ""), "data-fact": "skill-loaded" },
      el("strong", { text: "skill " + said + flag }), start.skill_evidence ? ": " + start.skill_evidence : "");
  }

  function renderStart(group, start, terms) {
    var verdict = start.status !== "ok" ? start.status : start.passed ? "caught" : "missed";
    var unreadable = start.answer && start.answer.source === "none";
    var box = el("article", { className: "start status-" + start.status + (start.status === "ok" ? (start.passed ? " passed" : " missed") : ""), "data-start": start.start_id || "" });
    box.appendChild(el("div", { className: "start-head" },
      el("strong", { text: start.arm + " · rep " + (start.rep == null ? "?" : start.rep) + " · " + verdict }),
      start.sandbox === "off" ? el("span", { className: "flag bad", "data-fact": "unsealed", title: "run without the sandbox (sandbox: off): its agent could read the answer keys", text: "unsealed" }) : null,
      unreadable ? el("span", { className: "flag warn", "data-fact": "unreadable", title: "no field the output spec names could be read from this answer (answer_source: none)", text: "answer unreadable" }) : null,
      el("span", { text: "duration " + (start.duration_s == null ? "-" : fixed(start.duration_s, 1) + " s") }),
      el("span", { text: start.tokens_in == null && start.tokens_out == null ? "tokens not reported"
        : "tokens " + integer(start.tokens_in) + " in / " + integer(start.tokens_out) + " out" }),
      start.cost_usd != null ? el("span", { text: "cost $" + fixed(start.cost_usd, 4) }) : null,
      start.turns != null ? el("span", { text: start.turns + " turn(s)" }) : null,
      el("span", { className: "hint", text: "exit " + (start.exit_code == null ? "-" : start.exit_code) + " · " + (start.started || "?") + (start.start_id ? " · start " + start.start_id.slice(0, 12) : "") + (start.retry_of ? " · retry of " + start.retry_of.slice(0, 12) : "") + (start.resume_of ? " · resumes " + start.resume_of.slice(0, 12) : "") })));
    if (start.error) box.appendChild(el("p", { className: "failed" }, el("strong", { text: "error: " }), highlighted(start.error, terms)));
    if (start.stderr_tail) box.appendChild(el("details", { open: true }, el("summary", { text: "stderr (tail)" }), el("pre", { className: "stderr" }, highlighted(start.stderr_tail, terms))));
    box.appendChild(skillUse(start));
    (start.contaminated || []).forEach(function (leak) {
      box.appendChild(el("p", { className: "failed", "data-fact": "contaminated" }, el("strong", { text: "contaminated: " }), leak.source + ": ", el("code", { text: leak.text })));
    });
    if (start.grading.length) {
      var list = el("ul", { className: "grading" });
      start.grading.forEach(function (d) {
        var item = el("li", null, el("strong", { className: d.caught ? "held" : "failed", text: d.defect + (d.caught ? " caught ✓" : " missed ✗") }));
        if (d.judge) item.appendChild(el("span", { className: "judge", "data-fact": "judge" }, " judge: " + (d.judge.caught ? "caught" : "missed") + (d.judge.reason ? " — " + d.judge.reason : "")));
        if (d.expectations) {
          var inner = el("ul");
          d.expectations.forEach(function (x) {
            inner.appendChild(el("li", { className: x.held ? "held" : "failed" },
              el("code", { text: x.field }), " expects " + expectationText(x.expected) + ": " + x.reason + (x.held ? " ✓" : " ✗")));
          });
          item.appendChild(inner);
        } else {
          item.appendChild(el("span", { className: "hint", text: " (expectations not available)" }));
        }
        list.appendChild(item);
      });
      box.appendChild(el("div", null, el("strong", { text: "grading" }), list));
    }
    if (start.grading_note) box.appendChild(el("p", { className: "hint", text: start.grading_note }));
    if (start.answer) {
      var a = start.answer;
      var about = integer(a.chars) + " chars" + (a.source ? ", read as " + a.source : "") + (a.truncated ? ", first " + integer(state.model.meta.answer_cap) + " shown" : "") +
        (a.output_truncated ? ", output capped by the run" : "") + (a.file ? " · " + a.file : "");
      box.appendChild(el("details", { open: true, className: "answer" }, el("summary", { text: "answer (" + about + ")" }), el("pre", { className: "answer" }, highlighted(a.text, terms))));
    }
    return box;
  }

  /* The probe as it ran: the artifact with each defect's quote marked, and
   * each defect's quote and caught_when. */
  function renderProbe(group, terms) {
    var pane = el("section", { className: "probe-pane", "aria-label": "the probe" }, el("h3", { text: "The probe" }));
    var content = group.probe_content;
    if (!content) {
      pane.appendChild(el("p", { className: "hint", "data-fact": "no-probe", text: "The probe as it ran is not on disk (on disk: " + group.on_disk +
        "): its artifact, quotes and caught_when cannot be shown. Defects on record: " + (group.defects.join(", ") || "-") + "." }));
      return pane;
    }
    var defects = el("ul", { className: "defects" });
    content.defects.forEach(function (d) {
      var where = d.quote == null ? "no quote" : !d.quote_spans.length ? "quote not found in the artifact" : d.quote_spans.length > 1 ? "quote found " + d.quote_spans.length + " times" : null;
      defects.appendChild(el("li", { "data-defect": d.id },
        el("strong", { text: d.id }),
        d.quote != null ? [" ", el("q", { className: "quote", "data-fact": "quote" }, highlighted(d.quote, terms))] : null,
        where ? el("span", { className: "hint", text: " (" + where + ")" }) : null,
        el("div", { className: "caught-when" }, d.judged ? "decided by a judge" : ["caught when ",
          el("code", { "data-fact": "caught_when", text: JSON.stringify(d.caught_when) })])));
    });
    pane.appendChild(defects);
    var artifact = content.artifact;
    pane.appendChild(el("div", { className: "hint" }, "artifact ", el("code", { text: artifact.path }), " · " + integer(artifact.chars) + " chars" +
      (artifact.truncated ? ", first " + integer(artifact.text.length) + " shown" : "")));
    var ranges = [];
    content.defects.forEach(function (d) {
      d.quote_spans.forEach(function (span) {
        ranges.push({ start: span[0], end: span[1], className: "quote", attributes: { "data-defect": d.id, title: "defect " + d.id } });
      });
    });
    pane.appendChild(el("pre", { className: "artifact" }, marked(artifact.text, ranges)));
    return pane;
  }

  function renderArm(group, arm, terms) {
    var starts = group.starts.filter(function (s) { return s.arm === arm; });
    var column = el("section", { className: "arm-column", "data-arm": arm },
      el("h3", { text: arm + " · " + armText(group.arms[arm]) + " · " + starts.length + " start(s)" }));
    if (!starts.length) column.appendChild(el("p", { className: "hint", text: "No start of this arm on record." }));
    starts.forEach(function (start) { column.appendChild(renderStart(group, start, terms)); });
    return column;
  }

  function openGroup(key) {
    var group = state.byKey.get(key);
    if (!group) return closeDetail();
    var search = state.filters.q.trim() ? searchTerms(state.filters.q.trim()) : null;
    var body = clear(document.getElementById("detail-body"));
    document.getElementById("detail-title").textContent = group.probe + " v" + group.version + " — " + seriesName(group);
    var h = group.hashes;
    var unreadable = group.answers_unreadable;
    body.appendChild(facts([
      ["skill", group.skill || "-"], ["probe.json", group.probe_path || "-"],
      ["kind", (group.kind || "-") + (group.band ? " (band " + group.band.min_caught + "–" + group.band.max_caught + ")" : "")],
      ["defects", group.defects.join(", ") || "-"],
      ["zone", el("span", null, zoneBadge(group.zone), regressionControl(group) ? " — keep as a regression/cost control" : "",
        passAtKText(group) ? el("span", { className: "pass-at-k", "data-fact": "pass-at-k", text: " · " + passAtKText(group) }) : null)],
      ["control", armFacts(group.arms.control)], ["treatment", armFacts(group.arms.treatment)],
      ["evidence", group.evidence.text], ["flags", flags(group).length ? flags(group) : "none"],
      unreadable && unreadable.unreadable ? ["answers unreadable", el("span", { "data-fact": "answers-unreadable",
        text: unreadable.unreadable + " of " + unreadable.graded + " graded rep(s): no field the output spec names could be read" +
          (unreadable.most ? " — most answers are unreadable, so their misses say nothing of the skill" : "") })] : null,
      group.unsealed ? ["unsealed", el("span", { className: "failed", "data-fact": "unsealed-starts",
        text: group.unsealed + " of " + group.starts.length + " start(s) ran without the sandbox (sandbox: off): their agent could read the answer keys" })] : null,
      ["hashes", "probe.json " + (h.probe_sha256 || "-").slice(0, 12) + " · artifact " + (h.artifact_sha256 || "-").slice(0, 12) + " · skill " + (h.skill_sha256 || "-").slice(0, 12) + " · skill folder " + (h.skill_tree_sha256 || "-").slice(0, 12)],
      ["last run", group.last_run || "-"],
    ]));
    if (group.calibration) body.appendChild(renderCalibration(group));
    body.appendChild(el("h3", { text: "Lint findings" + (group.lint ? (group.lint.when === "run" ? " at run time" : " (linted for this report; the files are unchanged since the run)") : "") }));
    if (!group.lint) body.appendChild(el("p", { className: "hint", text: "Not available: the probe's files on disk are not the ones that ran." }));
    else if (!group.lint.findings.length) body.appendChild(el("p", { text: "none" }));
    else body.appendChild(el("ul", { className: "findings" }, group.lint.findings.map(function (f) {
      return el("li", null, el("span", { className: "sev-" + f.severity, text: f.code + " " + f.severity }), " " + f.path + ":" + f.line + ":" + f.column + " — " + f.message);
    })));
    body.appendChild(el("h3", { text: "The probe beside its starts (" + group.starts.length + ")" }));
    body.appendChild(el("div", { className: "side-by-side" }, renderProbe(group, search), renderArm(group, "control", search), renderArm(group, "treatment", search)));
    showDetail("group", key);
    focusStart(body);
  }

  /* Scroll the start the URL names (``s=``), or else the first search match, into view. */
  function focusStart(body) {
    var target = null;
    if (state.focusStart) {
      target = Array.from(body.querySelectorAll("article.start")).filter(function (a) { return a.dataset.start === state.focusStart; })[0] || null;
      if (target) target.classList.add("focused");
    }
    if (!target) target = body.querySelector("mark.hit");
    if (target) target.scrollIntoView({ block: "center" });
  }

  function openMark(id) {
    var mark = state.marks.get(id);
    if (!mark) return closeDetail();
    var body = clear(document.getElementById("detail-body"));
    document.getElementById("detail-title").textContent = mark.count + " probe versions at one point — " + mark.series;
    body.appendChild(el("p", { className: "hint", text: "Every probe version this mark of the calibration plot stands for. Click one to open it." }));
    var table = el("table", { className: "grid members" }, el("thead", null, el("tr", null,
      ["probe", "v", "skill", "control", "treatment", "zone", "evidence"].map(function (t) { return el("th", { text: t }); }))));
    var tbody = el("tbody");
    mark.groups.forEach(function (key) {
      var g = state.byKey.get(key);
      var row = el("tr", { "data-key": key }, el("td", null, el("a", { className: "probe", href: "#" + hashFor({ g: key }), text: g.probe })), el("td", { text: String(g.version) }),
        el("td", { text: g.skill || "-" }), el("td", { text: armText(g.arms.control) }), el("td", { text: armText(g.arms.treatment) }),
        el("td", null, zoneBadge(g.zone)), el("td", { text: g.evidence.text }));
      tbody.appendChild(row);
    });
    table.appendChild(tbody);
    body.appendChild(table);
    showDetail("mark", id);
  }

  function showDetail(kind, id) {
    var detail = document.getElementById("detail");
    detail.dataset.kind = kind;
    detail.dataset.id = id;
    detail.hidden = false;
    document.getElementById("detail-backdrop").hidden = false;
    document.getElementById("detail-body").scrollTop = 0;
    document.getElementById("detail-close").focus();
  }

  function closeDetail() {
    document.getElementById("detail").hidden = true;
    document.getElementById("detail-backdrop").hidden = true;
  }

  function leaveDetail() {
    state.focusStart = null;
    closeDetail();
    var hash = hashFor(null);
    state.appliedHash = hash;
    history.pushState(null, "", location.pathname + location.search + (hash ? "#" + hash : ""));
  }

  // -- skill-creator evals and trigger tests ------------------------------------------

  function interval(pair) { return pair ? "[" + fixed(pair[0], 2) + ", " + fixed(pair[1], 2) + "]" : ""; }
  function signed(value) { return value == null ? "-" : (value >= 0 ? "+" : "") + Number(value).toFixed(2); }

  /* One arm of a skill-creator eval row: expectations passed, the pass rate
   * with its Wilson interval, the mean per-rep rate and pass@k. */
  function suiteArmCell(stats) {
    if (!stats || !stats.total) return el("td", { className: "arm", text: "-" });
    var at = stats.pass_at_k || {};
    var ks = Object.keys(at).sort(function (a, b) { return Number(a) - Number(b); });
    return el("td", { className: "arm" },
      el("span", { "data-fact": "rate", text: stats.passed + "/" + stats.total + " = " + fixed(stats.pass_rate, 2) + " " + interval(stats.interval) }),
      el("br"), el("span", { className: "hint", "data-fact": "mean", text: "mean " + fixed(stats.mean, 2) + " · " + stats.all_passed + "/" + stats.reps + " reps passed all" }),
      ks.length ? [el("br"), el("span", { className: "hint", "data-fact": "pass-at-k", text: "pass@k " + ks.map(function (k) { return k + ": " + fixed(at[k], 2); }).join(", ") })] : null);
  }

  function renderSuiteEvals() {
    var rows = state.model.suite_evals || [];
    var section = document.getElementById("suite-section");
    section.hidden = !rows.length;
    if (!rows.length) return;
    var table = clear(document.getElementById("suite-evals"));
    table.appendChild(el("thead", null, el("tr", null, ["suite", "eval", "agent", "model", "zone", "control", "treatment", "effect (treatment − control)"].map(function (t) { return el("th", { text: t }); }))));
    var body = el("tbody");
    rows.forEach(function (row) {
      body.appendChild(el("tr", { "data-eval": row.eval, "data-agent": row.agent || "", "data-model": row.model || "" },
        el("td", { className: "wrap", text: row.suite || "-" }), el("td", { className: "wrap id", text: String(row.eval) }),
        el("td", { text: row.agent || "-" }), el("td", { text: row.model || "-" }), el("td", null, zoneBadge(row.zone)),
        suiteArmCell(row.arms.control), suiteArmCell(row.arms.treatment),
        el("td", { className: "arm", "data-fact": "effect", text: row.effect == null ? "-" : signed(row.effect) + " [" + signed(row.effect_interval[0]) + ", " + signed(row.effect_interval[1]) + "]" })));
    });
    table.appendChild(body);
  }

  function rateCell(part) {
    return el("td", { className: "arm", text: part.rate == null ? "- (0 starts)" : part.hits + "/" + part.of + " = " + fixed(part.rate, 2) + " " + interval(part.interval) });
  }

  function renderTriggerTests() {
    var rows = state.model.trigger_tests || [];
    var section = document.getElementById("trigger-section");
    section.hidden = !rows.length;
    if (!rows.length) return;
    var table = clear(document.getElementById("trigger-tests"));
    table.appendChild(el("thead", null, el("tr", null, ["agent", "model", "precision", "recall", "TP", "FN", "FP", "TN", "unknown", "failed"].map(function (t) { return el("th", { text: t }); }))));
    var body = el("tbody");
    rows.forEach(function (row) {
      body.appendChild(el("tr", { "data-agent": row.agent || "", "data-model": row.model || "" },
        el("td", { text: row.agent || "-" }), el("td", { text: row.model || "-" }), rateCell(row.precision), rateCell(row.recall),
        ["tp", "fn", "fp", "tn", "unknown", "failed"].map(function (k) { return el("td", { className: "num", text: integer(row[k]) }); })));
    });
    table.appendChild(body);
  }

  // -- start ----------------------------------------------------------------------

  function start(payload) {
    state.payload = payload;
    state.model = payload.model;
    state.model.groups.forEach(function (g) { state.byKey.set(g.key, g); });
    state.series = payload.plot.shown_first;
    buildIndex();
    renderHeader();
    renderZones();
    renderSuiteEvals();
    renderTriggerTests();
    renderFilters();
    renderHead();
    renderRows();
    document.getElementById("detail-close").addEventListener("click", leaveDetail);
    document.getElementById("detail-backdrop").addEventListener("click", leaveDetail);
    document.addEventListener("keydown", function (event) { if (event.key === "Escape" && !document.getElementById("detail").hidden) leaveDetail(); });
    window.addEventListener("hashchange", applyHash);
    window.addEventListener("popstate", applyHash);
    return renderPlot().then(function () { applyHash(); });
  }

  decodePayload().then(start).then(function () { ready.resolve(true); }, function (error) {
    var node = document.getElementById("load-error");
    node.hidden = false;
    node.textContent = "The report could not be shown: " + error + " (it needs a browser with DecompressionStream: Chrome 80, Firefox 113, Safari 16.4 or later).";
    ready.reject(error);
    throw error;
  });
})();
