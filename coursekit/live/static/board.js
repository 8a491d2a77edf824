// The TA live board: polls board.json and redraws #board. Every name, message and
// number is set with textContent: a record's text is data.
"use strict";

(function () {
  const labels = document.getElementById("labels").dataset;
  const root = document.getElementById("board");
  const status = document.getElementById("status");
  let etag = null;
  window.coursekitBoard = { updates: 0 }; // the same object for the page's whole life

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  function table(headers, rows) {
    const t = el("table");
    const head = el("tr");
    headers.forEach((h) => head.appendChild(el("th", h)));
    t.appendChild(head);
    rows.forEach((cells) => {
      const tr = el("tr");
      cells.forEach((cell) => tr.appendChild(cell instanceof Node ? cell : el("td", cell)));
      t.appendChild(tr);
    });
    return t;
  }

  function td(text, cls) {
    return el("td", text, cls);
  }

  function functionRows(counts) {
    return counts.map((c) => {
      const total = c.passing.length + c.failing.length || 1;
      const bar = el("td");
      const pass = el("span", null, "bar");
      pass.style.width = (120 * c.passing.length) / total + "px";
      const fail = el("span", null, "bar fail");
      fail.style.width = (120 * c.failing.length) / total + "px";
      bar.appendChild(pass);
      bar.appendChild(fail);
      return [
        td(c.function),
        td(c.passing.length, "pass"),
        td(c.failing.length + (c.failing.length ? " (" + c.failing.join(", ") + ")" : ""), "fail"),
        bar,
      ];
    });
  }

  function lastRows(rows) {
    return rows.map((r) => {
      const held = r.outcome === "too_soon" || r.outcome === "too_many";
      let outcome = r.outcome_label;
      if (held && r.next_at) outcome += " · " + labels.next + " " + when(r.next_at);
      const seeds = Object.entries(r.seeds).map(([f, s]) => f + ": " + s);
      return [
        td(r.learner),
        td(when(r.submitted_at)),
        td(outcome, held ? "held" : r.outcome === "graded" ? "" : "fail"),
        td(r.points === null ? "—" : r.points + " / " + r.max),
        r.failing === null
          ? td("—")
          : td(r.failing.length ? r.failing.join(", ") : labels.none, r.failing.length ? "fail" : "pass"),
        td(seeds.join(", ")),
      ];
    });
  }

  // Times in the course's zone, not the TA's browser's, laid out as the learners' notes
  // lay them out; the zone by its offset (2026-12-03 19:05:00 GMT+9; the notes say KST).
  const clock = (() => {
    const fields = { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit",
      minute: "2-digit", second: "2-digit", hourCycle: "h23", timeZoneName: "short" };
    let format;
    try {
      format = new Intl.DateTimeFormat("en-US", { ...fields, timeZone: labels.zone || undefined });
    } catch (error) { // a zone this browser does not know: its own
      format = new Intl.DateTimeFormat("en-US", fields);
    }
    return (date) => {
      const p = Object.fromEntries(format.formatToParts(date).map((x) => [x.type, x.value]));
      return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second} ${p.timeZoneName}`;
    };
  })();

  function when(iso) {
    const date = new Date(iso);
    return isNaN(date) ? iso : clock(date);
  }

  function section(a, stuckAfter) {
    const s = el("section");
    s.dataset.assignment = a.assignment;
    s.appendChild(el("h2", a.assignment + " · " + a.learners + " " + labels.learners));
    s.appendChild(el("h3", labels.functions));
    s.appendChild(table([labels.function, labels.passing, labels.failing, ""], functionRows(a.functions)));
    s.appendChild(el("h3", labels.stuck));
    s.appendChild(el("p", labels.stuckHelp.replace("{n}", stuckAfter), "muted"));
    const stuck = a.stuck.length
      ? table([labels.learner, labels.function, labels.attempts, labels.hint],
          a.stuck.map((x) => [td(x.learner, "fail"), td(x.function), td(x.attempts),
            td(x.hint ? labels.hintSeen.replace("{n}", x.hint) : labels.none, "hint")]))
      : el("p", labels.none, "muted");
    stuck.classList.add("stuck");
    s.appendChild(stuck);
    s.appendChild(el("h3", labels.misconceptions));
    s.appendChild(
      a.misconceptions.length
        ? table([labels.function, labels.misconception, labels.who],
            a.misconceptions.map((m) => [td(m.function), td("[" + m.key + "] " + m.title),
              td(m.learners.length + " (" + m.learners.join(", ") + ")")]))
        : el("p", labels.none, "muted"));
    s.appendChild(el("h3", labels.unknown));
    s.appendChild(
      a.unknown.length
        ? table([labels.function, labels.output, labels.who],
            a.unknown.map((u) => [td(u.function), td(u.title),
              td(u.learners.length + " (" + u.learners.join(", ") + ")")]))
        : el("p", labels.none, "muted"));
    s.appendChild(el("h3", labels.last));
    s.appendChild(table([labels.learner, labels.submitted, labels.outcome, labels.points,
      labels.failingFunctions, labels.seeds], lastRows(a.last)));
    return s;
  }

  function draw(data) {
    const sections = data.assignments.map((a) => section(a, data.stuck_after));
    if (!sections.length) sections.push(el("p", labels.empty, "muted"));
    root.replaceChildren(...sections);
    window.coursekitBoard.updates += 1;
  }

  async function poll() {
    try {
      const headers = etag ? { "If-None-Match": etag } : {};
      if (labels.xsrf) headers["X-XSRFToken"] = labels.xsrf; // the hub's check on a fetch
      const response = await fetch(labels.data, { headers, credentials: "same-origin", cache: "no-cache" });
      if (response.status === 200) {
        etag = response.headers.get("ETag");
        draw(await response.json());
      } else if (response.status !== 304) {
        throw new Error(String(response.status));
      }
      status.textContent = labels.updated + " " + clock(new Date());
      status.className = "muted";
    } catch (error) {
      status.textContent = labels.offline;
      status.className = "fail";
    }
    setTimeout(poll, Number(labels.poll) || 2000);
  }

  poll();
})();
