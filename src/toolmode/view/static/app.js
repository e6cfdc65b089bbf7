// toolmode view: the page. Everything a trace holds may come from the model, so the DOM is built with
// createElement and textContent only (never innerHTML), links point only at this page's own routes, and
// control and format characters (terminal escapes, bidi overrides, zero-width characters) are shown as
// visible escapes instead of acting on the text around them.
"use strict";

(() => {
  const app = document.getElementById("app");
  const LIMIT = 4000; // characters of a long text shown before "show all"
  // Like toolmode.textsafe: controls, format characters, surrogates, line/paragraph separators; not \t or \n.
  const HIDDEN = /(?![\t\n])[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;
  const HAS_HIDDEN = new RegExp(HIDDEN.source, "u"); // not global: testing it moves no lastIndex
  const SELECTED = new Set(); // trace paths picked for comparison
  const PAGE = 200; // rows of the list drawn at a time
  let listState = { text: "", mode: "", model: "", stopped: "", sort: "started", desc: true, rows: PAGE };
  let generation = 0; // a page whose data arrives after the user went elsewhere is not drawn

  // ------------------------------------------------------------------ DOM helpers

  function escapeName(ch) {
    const code = ch.codePointAt(0);
    if (code <= 0xff) return "\\x" + code.toString(16).padStart(2, "0");
    if (code <= 0xffff) return "\\u" + code.toString(16).padStart(4, "0");
    return "\\U" + code.toString(16).padStart(8, "0");
  }

  function addText(el, value) {
    const s = value === null || value === undefined ? "" : String(value);
    if (!HAS_HIDDEN.test(s)) {
      el.appendChild(document.createTextNode(s));
      return el;
    }
    let last = 0;
    for (const m of s.matchAll(HIDDEN)) {
      if (m.index > last) el.appendChild(document.createTextNode(s.slice(last, m.index)));
      const mark = document.createElement("span");
      mark.className = "ctl";
      mark.textContent = escapeName(m[0]);
      mark.title = "a control or format character (U+" + m[0].codePointAt(0).toString(16).toUpperCase() + ")";
      el.appendChild(mark);
      last = m.index + m[0].length;
    }
    if (last < s.length) el.appendChild(document.createTextNode(s.slice(last)));
    return el;
  }

  const PROPS = new Set(["className", "title", "type", "value", "checked", "placeholder", "disabled", "id",
    "colSpan", "alt"]);

  // h("tag", {props}, ...children): strings become text (with visible control characters), nodes are
  // appended, arrays are flattened, null and false are skipped. `href` must be one of this page's routes.
  function h(tag, props, ...kids) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null) continue;
      if (key === "href") {
        if (!String(value).startsWith("#/")) throw new Error("refused link: " + value);
        el.setAttribute("href", value);
      } else if (key === "src") {
        if (!String(value).startsWith("/api/")) throw new Error("refused source: " + value);
        el.setAttribute("src", value);
      } else if (key.startsWith("on")) {
        el.addEventListener(key.slice(2), value);
      } else if (PROPS.has(key)) {
        el[key] = value;
      } else {
        throw new Error("unknown property " + key);
      }
    }
    append(el, kids);
    return el;
  }

  function append(el, kids) {
    for (const kid of kids) {
      if (kid === null || kid === undefined || kid === false) continue;
      if (Array.isArray(kid)) append(el, kid);
      else if (kid instanceof Node) el.appendChild(kid);
      else addText(el, kid);
    }
  }

  // A long text: the first LIMIT characters, and a button that shows the rest.
  function longText(value, cls, limit) {
    const s = value === null || value === undefined ? "" : String(value);
    const max = limit || LIMIT;
    const pre = h("pre", { className: cls || "" });
    if (s.length <= max) return addText(pre, s);
    addText(pre, s.slice(0, max));
    const more = h("button", { className: "more", type: "button" },
      "show all " + NUMBER.format(s.length) + " characters");
    more.addEventListener("click", () => {
      pre.textContent = "";
      addText(pre, s);
      more.remove();
    });
    return h("div", null, pre, more);
  }

  function codeBlock(tokens, code) {
    const pre = h("pre", { className: "code" });
    if (!Array.isArray(tokens)) return addText(pre, code);
    for (const tok of tokens) {
      if (!Array.isArray(tok) || tok.length !== 2) continue;
      const [cls, text] = tok;
      if (cls && /^[a-z]$/.test(cls)) pre.appendChild(addText(h("span", { className: "tok-" + cls }), text));
      else addText(pre, text);
    }
    return pre;
  }

  function clear(title) {
    document.title = "toolmode view" + (title ? " · " + title : "");
    delete document.documentElement.dataset.ready;
    app.textContent = "";
    window.scrollTo(0, 0);
  }

  // Tells whoever watches (the browser tests) that a page is drawn: <html data-ready="list">.
  function ready(page) { document.documentElement.dataset.ready = page; }

  // Fetch a page's data; null if the user has moved on meanwhile (or it failed: then the error is shown).
  async function load(urls, title) {
    const mine = ++generation;
    clear(title);
    try {
      const data = await Promise.all(urls.map(getJSON));
      if (mine !== generation) return null;
      clear(title);
      return data;
    } catch (err) {
      if (mine === generation) failed(err);
      return null;
    }
  }

  async function getJSON(url) {
    const response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (!response.ok) throw new Error((data && data.error) || ("HTTP " + response.status));
    return data;
  }

  function failed(err) {
    app.textContent = "";
    app.appendChild(h("div", { className: "box bad" }, "Cannot show this: ", String(err && err.message || err)));
    app.appendChild(h("p", null, h("a", { href: "#/" }, "← all runs")));
    ready("error");
  }

  function runLink(path, label) { return h("a", { href: "#/run?path=" + encodeURIComponent(path) }, label); }

  // ------------------------------------------------------------------ numbers

  const isNum = (v) => typeof v === "number" && isFinite(v);
  const NUMBER = new Intl.NumberFormat("en"); // one formatter: toLocaleString builds one per call
  const int = (v) => isNum(v) ? NUMBER.format(Math.round(v)) : "—";
  const money = (v) => isNum(v) ? "$" + (v >= 0.01 || v === 0 ? v.toFixed(4) : v.toPrecision(2)) : "—";
  const secs = (v) => isNum(v) ? (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)) + " s" : "—";
  const tokensOf = (r) => isNum(r.prompt_tokens) && isNum(r.completion_tokens) ? r.prompt_tokens + r.completion_tokens : null;
  const when = (iso) => typeof iso === "string" ? iso.slice(0, 16).replace("T", " ") : "";

  // A cell shows one line of a task or answer: the rest is in its tooltip and on the run page.
  const cut = (s) => typeof s === "string" && s.length > 160 ? s.slice(0, 160) + "…" : s;

  function stoppedCell(value, limit) {
    const text = (value || "?") + (limit ? " (" + limit + ")" : "");
    return h("span", { className: "st-" + String(value || "").replace(/[^a-z_]/g, "") }, text);
  }

  // ------------------------------------------------------------------ the list of runs

  async function showList() {
    const got = await load(["/api/runs"], "runs");
    if (!got) return;
    const data = got[0];
    if (data.is_bench && !location.hash) {  // `toolmode view BENCH_FOLDER` opens on the bench
      location.replace("#/bench?path=");
      return;
    }
    document.getElementById("folder").textContent = "";
    addText(document.getElementById("folder"), data.folder);
    const runs = data.runs;
    for (const r of runs) {
      r.tokens = tokensOf(r);
      r.haystack = [r.task, r.answer, r.model, r.mode, r.path, r.error, r.stopped].join("\n").toLowerCase();
    }
    app.appendChild(h("h1", null, NUMBER.format(runs.length) + " run" + (runs.length === 1 ? "" : "s"),
      h("span", { className: "muted small" }, "  listed in " + data.seconds.toFixed(3) + " s")));
    if (data.benches.length) {
      app.appendChild(h("div", { className: "box info" }, "Bench folders: ",
        data.benches.map((b, i) => [i ? " · " : "", h("a", { href: "#/bench?path=" + encodeURIComponent(b.path) }, b.name)])));
    }
    if (data.truncated) app.appendChild(h("div", { className: "box warn" }, "The folder holds too many files: the list stopped early."));
    if (data.skipped.length) {
      app.appendChild(h("details", { className: "box warn" },
        h("summary", null, data.skipped.length + " file(s) not read"), h("ul", null, data.skipped.map((s) => h("li", null, s)))));
    }
    if (!runs.length) {
      app.appendChild(h("p", { className: "muted" }, "No traces here. `toolmode run` writes one per run into ./runs."));
      ready("list");
      return;
    }
    const options = (key) => [...new Set(runs.map((r) => r[key]).filter((v) => v))].sort();
    const select = (key, label) => {
      const el = h("select", { title: label, onchange: () => { listState[key] = el.value; render(); } },
        h("option", { value: "" }, "any " + label), options(key).map((v) => h("option", { value: v }, v)));
      el.value = listState[key];
      return el;
    };
    const search = h("input", { type: "search", placeholder: "filter: task, answer, model, file…",
      value: listState.text, oninput: () => { listState.text = search.value; render(); } });
    const compare = h("button", { type: "button", disabled: true, onclick: () => openCompare() });
    app.appendChild(h("div", { className: "filters" }, search, select("mode", "mode"), select("model", "model"),
      select("stopped", "stop"), compare));
    const columns = [
      ["started", "when (UTC)", "opt"], ["task", "task", ""], ["mode", "mode", ""], ["model", "model", "opt"],
      ["answer", "answer", "opt2"], ["steps", "steps", "num"], ["tokens", "tokens", "num"], ["cost", "cost", "num"],
      ["wall_time", "time", "num"], ["stopped", "stopped", ""]];
    const head = h("tr", null, h("th", { className: "w-pick", title: "pick two to compare" }, "⇆"), columns.map(([key, label, cls]) => {
      const th = h("th", { className: "sort " + cls + " w-" + label.split(" ")[0], title: "sort by " + label, onclick: () => {
        listState.desc = listState.sort === key ? !listState.desc : key === "started";
        listState.sort = key;
        render();
      } }, label);
      th.dataset.key = key;
      th.dataset.label = label;
      return th;
    }));
    const body = h("tbody");
    const count = h("p", { className: "muted small" });
    app.appendChild(count);
    app.appendChild(h("div", { className: "scroll" }, h("table", { className: "runs list" }, h("thead", null, head), body)));

    function updateCompare() {
      compare.textContent = "compare the two picked (" + SELECTED.size + "/2)";
      compare.disabled = SELECTED.size !== 2;
    }

    function render() {
      const needle = listState.text.trim().toLowerCase();
      const shown = runs.filter((r) => (!needle || r.haystack.includes(needle))
        && (!listState.mode || r.mode === listState.mode) && (!listState.model || r.model === listState.model)
        && (!listState.stopped || r.stopped === listState.stopped));
      const key = listState.sort;
      const sign = listState.desc ? -1 : 1;
      shown.sort((a, b) => {
        const x = a[key], y = b[key];
        if (x === y) return 0;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        return (x < y ? -1 : 1) * sign;
      });
      for (const th of head.querySelectorAll("th.sort")) {
        th.textContent = th.dataset.label + (th.dataset.key === key ? (listState.desc ? " ▼" : " ▲") : "");
      }
      count.textContent = shown.length === runs.length ? "" : NUMBER.format(shown.length) + " of " + NUMBER.format(runs.length) + " match";
      body.textContent = "";
      for (const r of shown.slice(0, listState.rows)) {
        const pick = h("input", { type: "checkbox", title: "pick to compare", checked: SELECTED.has(r.path) });
        pick.addEventListener("change", () => {
          if (pick.checked) {
            if (SELECTED.size >= 2) SELECTED.delete(SELECTED.values().next().value);
            SELECTED.add(r.path);
          } else SELECTED.delete(r.path);
          render();
        });
        const row = h("tr", null,
          h("td", { className: "pick" }, pick),
          h("td", { className: "when opt", title: r.path }, when(r.started)),
          h("td", { className: "clip", title: (r.task || "") + (r.answer ? "\n\nanswer: " + r.answer : "") },
            runLink(r.path, cut(r.task) || "(no task)"), r.turns > 1 ? h("span", { className: "badge" }, r.turns + " turns") : null),
          h("td", null, r.mode || ""), h("td", { className: "opt nowrap" }, r.model || ""),
          h("td", { className: "clip opt2", title: r.answer || "" }, cut(r.answer || (r.error ? "error: " + r.error : ""))),
          h("td", { className: "num" }, int(r.steps)), h("td", { className: "num" }, int(r.tokens)),
          h("td", { className: "num" }, money(r.cost)), h("td", { className: "num" }, secs(r.wall_time)),
          h("td", null, stoppedCell(r.stopped, r.limit)));
        row.dataset.path = r.path;
        body.appendChild(row);
      }
      if (shown.length > listState.rows) {  // a long list is drawn a page at a time: the first screen comes at once
        const more = h("button", { type: "button", className: "more", onclick: () => { listState.rows += PAGE; render(); } },
          "show " + NUMBER.format(Math.min(PAGE, shown.length - listState.rows)) + " more");
        const all = h("button", { type: "button", className: "more", onclick: () => { listState.rows = Infinity; render(); } },
          "show all " + NUMBER.format(shown.length));
        body.appendChild(h("tr", { className: "more" }, h("td", { colSpan: 11 }, NUMBER.format(listState.rows) + " of "
          + NUMBER.format(shown.length) + " shown ", more, " ", all)));
      }
      updateCompare();
    }
    render();
    ready("list");
  }

  function openCompare() {
    const [a, b] = [...SELECTED];
    location.hash = "#/compare?a=" + encodeURIComponent(a) + "&b=" + encodeURIComponent(b);
  }

  // ------------------------------------------------------------------ token bars

  function stepTokens(run) {
    const rows = [];
    for (const step of run.steps) {
      const reply = step.items.find((i) => i.type === "reply");
      if (!reply) continue;
      const u = reply.usage;
      const prompt = isNum(u.prompt_tokens) ? u.prompt_tokens : 0;
      const cached = Math.min(isNum(u.cached_tokens) ? u.cached_tokens : 0, prompt);
      const completion = isNum(u.completion_tokens) ? u.completion_tokens : 0;
      const calls = step.items.filter((i) => i.type === "call").map((i) => i.name || "?");
      rows.push({ step: step.step, fresh: prompt - cached, cached, completion, total: prompt + completion, calls,
        seconds: reply.seconds });
    }
    return rows;
  }

  function legend() {
    return h("div", { className: "legend" },
      h("span", null, h("span", { className: "swatch seg-prompt" }), "prompt (not cached)"),
      h("span", null, h("span", { className: "swatch seg-cached" }), "prompt (cached)"),
      h("span", null, h("span", { className: "swatch seg-completion" }), "completion"));
  }

  // One stacked bar per step, all to the scale `max` (shared by both runs on the compare page).
  function tokenBars(rows, max, onStep) {
    const grid = h("div", { className: "bars" });
    for (const r of rows) {
      const bar = h("div", { className: "bar", title: "prompt " + int(r.fresh + r.cached) + " (cached " + int(r.cached)
        + "), completion " + int(r.completion) });
      for (const [cls, value] of [["seg-prompt", r.fresh], ["seg-cached", r.cached], ["seg-completion", r.completion]]) {
        const seg = h("span", { className: cls });
        seg.style.width = (max > 0 ? (100 * value) / max : 0) + "%";
        bar.appendChild(seg);
      }
      const name = onStep ? h("button", { type: "button", onclick: () => onStep(r.step) }, "step " + r.step)
        : "step " + r.step;
      grid.appendChild(h("span", { className: "name" }, name));
      grid.appendChild(bar);
      grid.appendChild(h("span", { className: "total" }, int(r.total)));
      if (r.calls.length) grid.appendChild(h("span", { className: "calls", title: r.calls.join(", ") }, "→ " + r.calls.join(", ")));
    }
    return grid;
  }

  // One stacked column per step (prompt not cached at the bottom, then cached, then completion), all to the
  // scale `max`: a run of 100 steps fits in one screen. Clicking a column calls onStep(step).
  function tokenColumns(rows, max, onStep) {
    const plot = h("div", { className: "cols" });
    for (const r of rows) {
      const col = h("div", { className: "col", title: "step " + r.step + ": prompt " + int(r.fresh + r.cached) + " (cached "
        + int(r.cached) + "), completion " + int(r.completion) + (r.calls.length ? "\n→ " + r.calls.join(", ") : "") });
      col.style.height = (max > 0 ? (100 * r.total) / max : 0) + "%";
      for (const [cls, value] of [["seg-prompt", r.fresh], ["seg-cached", r.cached], ["seg-completion", r.completion]]) {
        const seg = h("span", { className: cls });
        seg.style.height = (r.total > 0 ? (100 * value) / r.total : 0) + "%";
        col.appendChild(seg);
      }
      if (onStep) col.addEventListener("click", () => onStep(r.step));
      col.dataset.step = r.step;
      plot.appendChild(col);
    }
    const first = rows.length ? rows[0].step : 0;
    const last = rows.length ? rows[rows.length - 1].step : 0;
    return h("div", { className: "colchart" },
      h("div", { className: "axis small muted" }, int(max) + " tokens"), plot,
      h("div", { className: "xaxis small muted" }, h("span", null, "step " + first),
        h("span", null, rows.length + " request" + (rows.length === 1 ? "" : "s")), h("span", null, "step " + last)));
  }

  // ------------------------------------------------------------------ one run

  function facts(pairs) {
    const dl = h("dl", { className: "facts" });
    for (const [label, value] of pairs) {
      if (value === null || value === undefined || value === "") continue;
      dl.appendChild(h("dt", null, label));
      dl.appendChild(h("dd", null, value));
    }
    return dl;
  }

  function usageText(u) {
    return "prompt " + int(u.prompt_tokens) + " (cached " + int(u.cached_tokens) + ") · completion "
      + int(u.completion_tokens) + (isNum(u.reasoning_tokens) && u.reasoning_tokens ? " (reasoning " + int(u.reasoning_tokens) + ")" : "");
  }

  function formatName(fmt) {
    return fmt === null || fmt === undefined ? "toolmode's first JSONL format (no version line)" : "format " + fmt;
  }

  function renderItem(item) {
    switch (item.type) {
      case "reply": {
        const parts = [];
        if (item.reasoning) parts.push(h("details", null, h("summary", null, "reasoning"), longText(item.reasoning)));
        if (item.content) parts.push(h("div", { className: "label" }, "reply"), longText(item.content));
        const notes = [];
        if (item.finish_reason && item.finish_reason !== "stop" && item.finish_reason !== "tool_calls") notes.push("finish: " + item.finish_reason);
        if (item.recovered) notes.push("recovered: " + item.recovered);
        if (isNum(item.attempts) && item.attempts > 1) notes.push(item.attempts + " attempts");
        if (item.model) notes.push("answered by " + item.model);
        if (notes.length) parts.push(h("div", { className: "muted small" }, notes.join(" · ")));
        return parts.length ? h("div", { className: "item" }, parts) : null;
      }
      case "call": {
        const head = h("div", { className: "call-head" }, "→ ", item.name || "?",
          item.ran ? h("span", { className: "badge" }, secs(item.seconds)) : h("span", { className: "badge warn" }, "requested, not run"),
          item.error ? h("span", { className: "badge bad" }, "error") : null);
        const parts = [head];
        if (item.code !== null && item.code !== undefined) parts.push(h("div", { className: "label" }, "code"), codeBlock(item.code_tokens, item.code));
        if (item.pretty) parts.push(h("div", { className: "label" }, "arguments"), longText(item.pretty));
        else if (item.pretty === null && item.arguments) parts.push(h("div", { className: "label" }, "arguments (not JSON)"), longText(item.arguments));
        if (item.ran) {
          parts.push(h("div", { className: "label" }, item.name === "run_code" ? "what it printed / returned" : "result"),
            longText(item.result, item.error ? "error" : ""));
        }
        return h("div", { className: "item call" }, parts);
      }
      case "approval": {
        const where = item.where === "run_code" ? " (from run_code)" : "";
        if (item.phase === "request") {
          return h("div", { className: "item box info" }, "approval asked: ", item.tool || "?", where,
            " · waits for the ", item.waits_for || "?",
            item.arguments ? h("details", null, h("summary", null, "arguments"), longText(item.arguments)) : null);
        }
        const approved = item.decision === "approved";
        return h("div", { className: "item box " + (approved ? "info" : "warn") },
          (approved ? "approved: " : "refused: "), item.tool || "?", where, " by ", item.by || "?",
          isNum(item.waited) && item.waited > 0 ? " after " + secs(item.waited) : "",
          item.reason ? " · " + item.reason : "",
          item.arguments ? h("details", null, h("summary", null, "edited arguments"), longText(item.arguments)) : null);
      }
      case "notice": return h("div", { className: "item box info" }, "notice: ", item.message);
      case "error": return h("div", { className: "item box bad" }, "error: ", item.message);
      case "policy": return h("div", { className: "item box info" }, "the loop told the model",
        item.about ? " (" + item.about + ")" : "", ": ", longText(item.content));
      case "retry": return h("div", { className: "item box warn" }, "retry ", int(item.attempt), " after ", secs(item.wait), ": ", item.reason);
      default: return h("details", { className: "item" }, h("summary", null, "event “", item.kind || "?", "” (not known to this viewer)"), longText(item.text));
    }
  }

  function renderMessage(m) {
    return h("div", { className: "msg" + (m.carried ? " carried" : "") },
      h("div", { className: "role" }, (m.index + 1) + ". " + (m.role || "?"),
        m.source ? h("span", { className: "badge" }, m.source + (m.about ? ": " + m.about : "")) : null,
        m.carried ? h("span", { className: "badge" }, "carried over") : null,
        m.tool_call_id ? h("span", { className: "badge" }, m.tool_call_id) : null),
      m.reasoning ? h("details", null, h("summary", null, "reasoning"), longText(m.reasoning)) : null,
      m.content !== null ? longText(m.content) : null,
      m.tool_calls ? longText(m.tool_calls) : null);
  }

  // A <details> whose content is built when it is first opened (a 100-step run holds 100 requests).
  function lazyDetails(label, build) {
    const el = h("details", null, h("summary", null, label));
    el.addEventListener("toggle", () => {
      if (el.open && !el.dataset.built) {
        el.dataset.built = "1";
        append(el, [build()]);
      }
    });
    return el;
  }

  function renderStep(step, messages) {
    const reply = step.items.find((i) => i.type === "reply");
    const header = h("header", null, h("h3", null, step.step === 0 ? "before the first request" : "step " + step.step));
    if (reply) {
      header.appendChild(h("span", { className: "small" }, usageText(reply.usage)));
      header.appendChild(h("span", { className: "small muted" }, secs(reply.seconds) + " · " + money(reply.cost)));
    }
    const items = h("div", { className: "items" });
    if (reply && messages && isNum(reply.sent_messages)) {
      const sent = messages.slice(0, reply.sent_messages);
      items.appendChild(lazyDetails("the request: " + sent.length + " message" + (sent.length === 1 ? "" : "s") + " as sent",
        () => h("div", null, sent.map(renderMessage))));
    }
    append(items, step.items.map(renderItem));
    const section = h("section", { className: "step" }, header, items);
    section.dataset.step = step.step;
    return section;
  }

  function renderRun(run, file, turn, turns) {
    const s = run.start || {};
    const e = run.end;
    const box = h("section", { className: turns > 1 ? "turn" : "" });
    if (turns > 1) box.appendChild(h("h2", null, "Turn " + (turn + 1) + " of " + turns));
    box.appendChild(facts([
      ["task", longText(s.task, "plain", 2000)],
      ["mode", s.mode], ["model", s.model], ["endpoint", s.base_url],
      ["stopped", e ? stoppedCell(e.stopped, e.limit) : stoppedCell("unfinished")],
      ["answer", e && e.answer !== null ? longText(e.answer, "plain", 2000) : null],
      ["error", e && e.error ? longText(e.error, "error") : null],
      ["steps", e ? int(e.steps) : String(run.steps.length)],
      ["tokens", e ? usageText(e.usage) : null],
      ["cost", e ? money(e.cost) : null],
      ["time", e ? secs(e.wall_time) + " (waiting for the model " + secs(e.model_time) + ")" : null],
      ["before the task", isNum(s.history) && s.history > 1 ? int(s.history) + " messages (system prompt and earlier turns)" : null],
      ["trace", turn === 0 ? formatName(file.format) : null],
    ]));
    if (!e) box.appendChild(h("div", { className: "box warn" }, "This run has no run_end event: it was still running, or its process died. Every finished step is shown."));
    if (s.notes && s.notes.length) box.appendChild(h("ul", { className: "small muted" }, s.notes.map((n) => h("li", null, n))));
    if (run.missing.length) {
      box.appendChild(h("div", { className: "box info" }, "This trace does not record ", run.missing.join(" or "),
        " (it was written before toolmode kept the full trajectory); the steps below are rebuilt from its events."));
    }
    if (!run.missing.includes("the system prompt")) {
      box.appendChild(h("details", null, h("summary", null, "system prompt"),
        run.system_prompt === null ? h("p", { className: "muted" }, "(none was sent)") : longText(run.system_prompt)));
    }
    if (run.messages) {
      box.appendChild(lazyDetails("the conversation as the model saw it (" + run.messages.length + " messages)",
        () => h("div", null, run.messages.map(renderMessage))));
    }
    if (s.request) box.appendChild(h("details", null, h("summary", null, "request settings"), longText(s.request)));
    if (s.config) box.appendChild(h("details", null, h("summary", null, "run settings"), longText(s.config)));
    for (const set of run.tool_sets) {
      box.appendChild(h("details", null, h("summary", null, "tools sent" + (isNum(set.step) ? " from step " + set.step : "") + ": " + set.names.join(", ")),
        longText(set.schemas)));
    }
    const rows = stepTokens(run);
    if (rows.length) {
      box.appendChild(h("h3", { className: "space" }, "Tokens per request"));
      box.appendChild(legend());
      const max = Math.max(...rows.map((r) => r.total), 1);
      const jump = (n) => {
        const target = box.querySelector("section.step[data-step='" + Number(n) + "']");
        if (target) target.scrollIntoView({ block: "start" });
      };
      box.appendChild(rows.length > 12 ? tokenColumns(rows, max, jump) : tokenBars(rows, max, jump));
    }
    box.appendChild(h("h3", { className: "space" }, "Timeline"));
    for (const step of run.steps) box.appendChild(renderStep(step, run.messages));
    return box;
  }

  async function showRun(path) {
    const got = await load(["/api/run?path=" + encodeURIComponent(path || "")], "run");
    if (!got) return;
    const file = got[0];
    const sum = file.summary || {};
    app.appendChild(h("div", { className: "nav" }, h("a", { href: "#/" }, "← all runs"),
      sum.bench !== undefined && sum.bench !== null ? h("a", { href: "#/bench?path=" + encodeURIComponent(sum.bench) }, "bench") : null));
    app.appendChild(h("h1", null, file.runs.length > 1 ? "Session of " + file.runs.length + " turns " : "Run ",
      h("span", { className: "mono small muted" }, file.path)));
    for (const p of file.problems) app.appendChild(h("div", { className: "box warn" }, p));
    file.runs.forEach((run, i) => app.appendChild(renderRun(run, file, i, file.runs.length)));
    if (!file.runs.length) app.appendChild(h("p", { className: "muted" }, "No events."));
    ready("run");
  }

  // ------------------------------------------------------------------ two runs side by side

  async function showCompare(a, b) {
    const files = await load([a, b].map((p) => "/api/run?path=" + encodeURIComponent(p || "")), "compare");
    if (!files) return;
    // A session file holds several turns: its first turn is compared.
    const runs = files.map((f) => ({ ...(f.runs[0] || { start: null, end: null, steps: [] }), path: f.path, turns: f.runs.length }));
    app.appendChild(h("div", { className: "nav" }, h("a", { href: "#/" }, "← all runs")));
    app.appendChild(h("h1", null, "Two runs side by side"));
    const tasks = runs.map((r) => (r.start || {}).task);
    if (tasks[0] !== tasks[1]) app.appendChild(h("div", { className: "box warn" }, "The two runs were given different tasks."));
    else app.appendChild(h("div", { className: "small" }, "task: ", longText(tasks[0], "plain", 600)));
    const rows = runs.map(stepTokens);
    const max = Math.max(1, ...rows.flat().map((r) => r.total));
    const totals = runs.map((r) => (r.end ? r.end.usage : null));
    const sums = totals.map((u) => (u && isNum(u.prompt_tokens) && isNum(u.completion_tokens) ? u.prompt_tokens + u.completion_tokens : null));
    if (sums[0] && sums[1]) {  // the headline: how the second run's tokens, cost and requests compare with the first's
      const name = (r) => (r.start && r.start.mode) || "?";
      const costs = runs.map((r) => (r.end ? r.end.cost : null));
      const parts = [name(runs[1]) + " used " + Math.round((100 * sums[1]) / sums[0]) + " % of " + name(runs[0]) + "'s tokens ("
        + int(sums[1]) + " against " + int(sums[0]) + ")"];
      if (isNum(costs[0]) && isNum(costs[1]) && costs[0] > 0) parts.push(Math.round((100 * costs[1]) / costs[0]) + " % of its cost");
      parts.push(rows[1].length + " requests against " + rows[0].length);
      app.appendChild(h("div", { className: "box info headline" }, parts.join("; ") + "."));
    }
    const pair = h("div", { className: "pair" });
    runs.forEach((run, i) => {
      const s = run.start || {};
      const e = run.end;
      const u = totals[i];
      pair.appendChild(h("section", null,
        h("h2", null, (s.mode || "?") + " · " + (s.model || "?")),
        h("div", { className: "small" }, runLink(run.path, run.path), run.turns > 1 ? " (turn 1 of " + run.turns + ")" : ""),
        facts([
          ["stopped", e ? stoppedCell(e.stopped, e.limit) : stoppedCell("unfinished")],
          ["requests", e ? int(e.steps) : String(rows[i].length)],
          ["total", isNum(sums[i]) ? int(sums[i]) + " tokens" : null],
          ["tokens", u ? usageText(u) : null],
          ["cost", e ? money(e.cost) : null],
          ["time", e ? secs(e.wall_time) : null],
        ]),
        h("h3", null, "where the tokens went, per request"), legend(),
        Math.max(rows[0].length, rows[1].length) > 12 ? tokenColumns(rows[i], max, null) : tokenBars(rows[i], max, null),
        e && e.answer !== null ? [h("h3", { className: "space" }, "answer"), longText(e.answer, "plain", 600)] : null));
    });
    app.appendChild(pair);
    ready("compare");
  }

  // ------------------------------------------------------------------ a bench

  async function showBench(path) {
    const got = await load(["/api/bench?path=" + encodeURIComponent(path || "")], "bench");
    if (!got) return;
    const mine = generation;
    const bench = got[0];
    app.appendChild(h("div", { className: "nav" }, h("a", { href: "#/" }, "← all runs")));
    if (bench.scripted) app.appendChild(h("div", { className: "banner" }, "SCRIPTED: ", bench.scripted_note,
      ". Every figure below comes from scripted replies; run the bench against a real model to compare modes."));
    app.appendChild(h("h1", null, bench.title));
    const settings = Object.entries(bench.settings);
    if (settings.length) app.appendChild(h("p", { className: "small" }, settings.map(([k, v], i) => [i ? "; " : "", h("b", null, k), ": ", v])));
    app.appendChild(h("h2", null, "Per task and mode (mean ± sd over n runs)"));
    const table = h("table", null, h("thead", null, h("tr", null, bench.columns.map((c, i) => h("th", { className: i > 1 ? "num" : "" }, c)))));
    const body = h("tbody");
    for (const r of bench.rows) {
      body.appendChild(h("tr", { className: r.pooled ? "pooled" : "" }, h("td", null, r.task), h("td", null, r.mode),
        h("td", { className: "num" }, String(r.n)), r.cols.map((c) => h("td", { className: "num" }, c))));
    }
    table.appendChild(body);
    app.appendChild(h("div", { className: "scroll" }, table));
    if (bench.pooled_note) app.appendChild(h("p", { className: "muted small" }, bench.pooled_note + "."));
    if (bench.reference) {
      app.appendChild(h("h2", null, bench.reference.title));
      app.appendChild(h("div", { className: "scroll" }, h("table", null,
        h("thead", null, h("tr", null, ["who", "actions / mode", "success", "turns", "n"].map((c) => h("th", null, c)))),
        h("tbody", null, bench.reference.rows.map((row) => h("tr", null, row.map((c) => h("td", null, c))))))));
      app.appendChild(h("p", { className: "muted small" }, bench.reference.note + "."));
    }
    const charts = bench.charts.map((name) => h("img", { alt: name.replace("_", " ") + " chart",
      src: "/api/chart?path=" + encodeURIComponent(bench.path) + "&name=" + encodeURIComponent(name) }));
    if (charts.length) {
      app.appendChild(h("h2", null, "Charts"));
      app.appendChild(h("div", { className: "charts" }, charts));
    }
    app.appendChild(h("h2", null, "Episodes (" + bench.episodes.length + ")"));
    const compare = h("button", { type: "button", disabled: true, onclick: () => openCompare() });
    const update = () => { compare.textContent = "compare the two picked (" + SELECTED.size + "/2)"; compare.disabled = SELECTED.size !== 2; };
    app.appendChild(h("div", { className: "filters" }, compare));
    const cols = ["⇆", "task", "mode", "run", "ok", "reason", "stopped", "requests", "tokens", "cached", "cost", "wall"];
    const numeric = new Set(["run", "requests", "tokens", "cached", "cost", "wall"]);
    const eps = h("tbody");
    for (const ep of bench.episodes) {
      const pick = ep.trace ? h("input", { type: "checkbox", title: "pick to compare", checked: SELECTED.has(ep.trace) }) : null;
      if (pick) pick.addEventListener("change", () => {
        if (pick.checked) {
          if (SELECTED.size >= 2) SELECTED.delete(SELECTED.values().next().value);
          SELECTED.add(ep.trace);
        } else SELECTED.delete(ep.trace);
        for (const box of eps.querySelectorAll("input[type=checkbox]")) box.checked = SELECTED.has(box.closest("tr").dataset.trace);
        update();
      });
      const row = h("tr", null, h("td", null, pick), h("td", null, ep.trace ? runLink(ep.trace, ep.task) : ep.task),
        h("td", null, ep.mode), h("td", { className: "num" }, int(ep.run)),
        h("td", null, h("span", { className: ep.ok ? "st-answer" : "st-failed" }, ep.ok ? "✓" : "✗")),
        h("td", { className: "clip", title: (ep.reason || "") + (ep.error ? " — " + ep.error : "") }, ep.reason || "", ep.error ? " — " + ep.error : ""),
        h("td", null, stoppedCell(ep.stopped)), h("td", { className: "num" }, int(ep.steps)),
        h("td", { className: "num" }, int(ep.tokens)), h("td", { className: "num" }, int(ep.cached_tokens)),
        h("td", { className: "num" }, money(ep.cost)), h("td", { className: "num" }, secs(ep.wall_time)));
      row.dataset.trace = ep.trace || "";
      eps.appendChild(row);
    }
    app.appendChild(h("div", { className: "scroll" }, h("table", { className: "runs" },
      h("thead", null, h("tr", null, cols.map((c) => h("th", { className: numeric.has(c) ? "num" : "" }, c)))), eps)));
    update();
    await Promise.all(charts.map((img) => img.decode().catch(() => null)));  // drawn by the bench's own code
    if (mine === generation) ready("bench");
  }

  // ------------------------------------------------------------------ routes

  function route() {
    const hash = location.hash || "#/";
    const at = hash.indexOf("?");
    const page = at < 0 ? hash : hash.slice(0, at);
    const params = new URLSearchParams(at < 0 ? "" : hash.slice(at + 1));
    if (page === "#/run") return showRun(params.get("path"));
    if (page === "#/compare") return showCompare(params.get("a"), params.get("b"));
    if (page === "#/bench") return showBench(params.get("path"));
    return showList();
  }

  window.addEventListener("hashchange", route);
  route();
})();
