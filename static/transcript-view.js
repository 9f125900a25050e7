// What the page does with transcript lines and panel entries as they arrive (session and share
// pages): times shown as the time of day, a filter that keeps requests and their answers
// together, Clear, and panel feeds that stay on their newest entry. session.js calls `added`
// and `refilter`; everything here only changes the view (the database keeps every event).
(function () {
  "use strict";
  const RELATIVE_KEY = "playground.transcript.relativeTimes";

  function box() { return document.getElementById("transcript-lines"); }
  function seqOf(line) { return parseInt(line.id.slice(3), 10); }           // id="ev-<seq>"
  function isLine(node) { return node.nodeType === 1 && node.classList.contains("ev"); }

  // --- times -----------------------------------------------------------------------
  // A line carries `data-ms`, milliseconds since the session's clock origin (`t`, as recorded
  // and exported); the page adds the origin (`data-origin`, Unix ms) and shows the viewer's
  // local time of day, or the milliseconds themselves when "relative ms" is ticked.
  let relative = false;
  try { relative = localStorage.getItem(RELATIVE_KEY) === "1"; } catch (err) { /* storage off: the default */ }

  function origin() {
    const b = box();
    const value = b ? Number(b.dataset.origin) : NaN;
    return value > 0 ? value : NaN;
  }
  const pad = (n, width) => String(n).padStart(width || 2, "0");
  function timeOfDay(ms) {
    const d = new Date(ms);
    return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  }
  function dateAndTime(ms) {
    const d = new Date(ms);
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${timeOfDay(ms)}`;
  }
  const millis = (ms) => ms.toFixed(1);
  function msOf(span) { return span ? Number(span.dataset.ms) : NaN; }

  // One time: its text by the chosen mode; its title the gap since `previous` (ms, or NaN).
  function stamp(span, previous, noun) {
    const ms = msOf(span);
    if (!Number.isFinite(ms)) return;
    const o = origin();
    const wall = Number.isFinite(o);
    span.textContent = relative || !wall ? millis(ms) : timeOfDay(o + ms);
    const facts = [Number.isFinite(previous) ? `+${millis(ms - previous)} ms since the previous ${noun}` : `the first ${noun} in this view`];
    facts.push(relative && wall ? dateAndTime(o + ms) : `${millis(ms)} ms since the session started`);
    span.title = facts.join(" · ");
  }
  // The time span of a transcript line or a panel entry.
  function timeOf(el) { return el.querySelector(el.classList.contains("ev") ? ":scope > summary > .t" : ":scope > .t"); }
  // The time of the entry shown before `el` in its list (NaN if none; after a Clear, the last cleared line's).
  function previousTime(el) {
    for (let p = el.previousElementSibling; p; p = p.previousElementSibling) {
      const ms = msOf(timeOf(p));
      if (Number.isFinite(ms)) return ms;
    }
    return el.parentElement === box() && cleared ? cleared.lastMs : NaN;
  }
  // Stamp `els` (in document order, consecutive), each against the one before it.
  function stampAll(els) {
    let previous = els.length ? previousTime(els[0]) : NaN;
    for (const el of els) {
      const span = timeOf(el);
      if (!span) continue;
      stamp(span, previous, el.classList.contains("ev") ? "line" : "entry");
      previous = msOf(span);
    }
  }
  function restampEverything() {
    const b = box();
    if (b) stampAll(Array.from(b.children));
    document.querySelectorAll("ol.feed").forEach((ol) => stampAll(Array.from(ol.children)));
  }

  // --- the filter: a matching request brings its response and progress ---------------
  // Lines carry `data-reply-to` (a response: the seq of its request) and `data-progress` (a
  // request's progress token, or the token a notifications/progress reports for). A line is
  // shown when its direction is ticked and, with text in the filter, when it contains the text
  // or belongs with a request that does (its response, its progress) or is the request of a
  // response that does. Each pass is linear: a map of tokens, lookups by id.
  const byToken = new Map();          // progress token -> the latest request line asking under it

  function settings() {
    const dirs = new Set(Array.from(document.querySelectorAll("[data-dir-filter]"))
      .filter((c) => c.checked).map((c) => c.dataset.dirFilter));
    const input = document.querySelector("[data-transcript-filter]");
    return { dirs, text: input ? input.value.trim().toLowerCase() : "" };
  }
  function isProgress(line) { return line.dataset.method === "notifications/progress"; }
  // The request line a response or a progress notification belongs to (if still on the page).
  function requestOf(line) {
    let request = null;
    if (line.dataset.replyTo) request = document.getElementById("ev-" + line.dataset.replyTo);
    else if (line.dataset.progress !== undefined && isProgress(line)) request = byToken.get(line.dataset.progress) || null;
    return request && request.isConnected ? request : null;
  }
  function remember(line) {
    if (line.dataset.progress === undefined || isProgress(line)) return;
    byToken.set(line.dataset.progress, line);
    if (byToken.size > 10000) {             // requests that left the page (its window keeps 5,000 lines)
      for (const [token, request] of byToken) if (!request.isConnected) byToken.delete(token);
    }
  }
  // Filter new lines (in order): each against the text, its request, and a response that
  // matches shows its request too.
  function filterNew(els, f) {
    for (const line of els) {
      remember(line);
      const okDir = f.dirs.has(line.dataset.dir);
      if (!f.text) { line.hidden = !okDir; continue; }
      line._match = line.textContent.toLowerCase().includes(f.text);
      const request = requestOf(line);
      line.hidden = !(okDir && (line._match || (request !== null && request._match === true)));
      if (line._match && request && line.dataset.replyTo && f.dirs.has(request.dataset.dir)) request.hidden = false;
    }
  }
  function refilter() {
    const b = box();
    if (!b) return;
    byToken.clear();
    filterNew(b.querySelectorAll(":scope > .ev"), settings());
  }

  // --- Clear: empty this view; the database, the exports and a reload keep everything ---
  let cleared = null;                 // { through: last seq cleared, lastMs, note }
  function clearView() {
    const b = box();
    if (!b) return;
    const evs = b.querySelectorAll(":scope > .ev");
    const last = evs[evs.length - 1];
    const note = document.createElement("p");
    note.className = "older cleared";
    note.setAttribute("role", "note");
    const count = evs.length;
    note.textContent = `Cleared ${count} line${count === 1 ? "" : "s"} from this view at ${timeOfDay(Date.now()).slice(0, 8)}. `
      + "The saved transcript and the exports keep everything; reloading the page shows it all again.";
    cleared = {
      through: last ? seqOf(last) : (cleared ? cleared.through : 0),
      lastMs: last ? msOf(timeOf(last)) : (cleared ? cleared.lastMs : NaN),
      note,
    };
    byToken.clear();
    b.replaceChildren(note);
  }
  // Lines a reconnect replays from the database that were cleared stay cleared (until a reload).
  function dropCleared(added) {
    if (!cleared) return added;
    const b = box();
    const kept = [];
    for (const node of added) {
      if (node.nodeType !== 1 || !node.isConnected) continue;
      if (isLine(node) ? seqOf(node) <= cleared.through : (node !== cleared.note && node.matches("p.older:not(.ev-skipped)"))) node.remove();
      else if (isLine(node)) kept.push(node);
    }
    if (!cleared.note.isConnected) b.prepend(cleared.note);
    return kept;
  }

  // A line the page already shows, come again: the replay on (re)connect reads the database,
  // which has lines the worker has saved but not yet sent (or is sending) to the live group;
  // those come once more after it. The first one stays (an id lookup each: cheap).
  function dropRepeated(added) {
    return added.filter((node) => {
      if (!isLine(node) || !node.isConnected || document.getElementById(node.id) === node) return true;
      node.remove();
      return false;
    });
  }

  // The replay on (re)connect replaces the lines with the same ones from the database: a line
  // the person had opened (and its raw text) stays open — one opened just after a reload
  // otherwise closed under the click.
  function keepOpen(removed, fresh) {
    const open = new Map();
    for (const node of removed) {
      if (isLine(node) && node.open) open.set(node.id, node.querySelector(":scope > details.raw[open]") !== null);
    }
    if (!open.size) return;
    for (const line of fresh) {
      if (!open.has(line.id)) continue;
      line.open = true;
      const raw = open.get(line.id) && line.querySelector(":scope > details.raw");
      if (raw) raw.open = true;
    }
  }

  // New transcript lines (session.js's observer), and the ones they replaced: repeated and
  // cleared ones dropped, the rest stamped and filtered, open ones kept open.
  function added(nodes, removed) {
    const fresh = dropCleared(dropRepeated(Array.from(nodes).filter((n) => n.nodeType === 1))).filter(isLine);
    if (!fresh.length) return;
    if (removed && removed.length) keepOpen(removed, fresh);
    stampAll(fresh);
    filterNew(fresh, settings());
  }

  // --- panel feeds: times, and the newest entry in view unless the person scrolled up ---
  function watchFeed(ol) {
    if (ol._watched) return;
    ol._watched = true;
    ol._pinned = true;
    ol.addEventListener("scroll", () => { ol._pinned = ol.scrollHeight - ol.scrollTop - ol.clientHeight < 16; });
    new MutationObserver((records) => {
      const fresh = [];
      for (const r of records) r.addedNodes.forEach((n) => { if (n.nodeType === 1) fresh.push(n); });
      if (fresh.length) stampAll(fresh);
      if (ol._pinned) ol.scrollTop = ol.scrollHeight;
    }).observe(ol, { childList: true });
    stampAll(Array.from(ol.children));
    ol.scrollTop = ol.scrollHeight;
  }
  // A panel opened: its feed shows the newest entry (a closed panel has no height to scroll).
  document.addEventListener("toggle", (e) => {
    if (e.target.matches && e.target.matches("details.panel") && e.target.open) {
      e.target.querySelectorAll("ol.feed").forEach((ol) => { if (ol._pinned !== false) ol.scrollTop = ol.scrollHeight; });
    }
  }, true);

  document.addEventListener("htmx:after:swap", () => document.querySelectorAll("ol.feed").forEach(watchFeed));
  document.addEventListener("change", (e) => {
    if (!e.target.matches("[data-relative-times]")) return;
    relative = e.target.checked;
    try { localStorage.setItem(RELATIVE_KEY, relative ? "1" : "0"); } catch (err) { /* kept for this page only */ }
    restampEverything();
  });
  document.addEventListener("click", (e) => {
    if (e.target.closest("[data-clear-transcript]")) clearView();
  });

  function start() {
    document.querySelectorAll("[data-relative-times]").forEach((c) => { c.checked = relative; });
    document.querySelectorAll("ol.feed").forEach(watchFeed);
    const b = box();
    if (b) stampAll(Array.from(b.children));
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();

  window.transcriptView = { added, refilter, cleared: () => cleared !== null };
})();
