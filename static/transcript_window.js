// The transcript as a window over the whole session (session and share pages): the page holds a
// bounded number of lines (data-keep); scrolling up loads earlier ones above (the view stays on
// the line it showed), far ones are dropped and loaded again when scrolled back to; new lines
// keep arriving at the bottom while the window reaches the latest event. The filter asks the
// server for the matching events of the whole session; choosing one loads the lines around it
// and scrolls to it, marked; clearing the filter returns to the latest lines. Chunks come from
// data-lines-url (?before=SEQ | ?after=SEQ | ?around=SEQ, &limit=N), matches from data-find-url,
// both as the page's own server-rendered lines. transcript-view.js stamps and filters every line.
(function () {
  "use strict";
  const CHUNK = 250;            // lines a scroll loads
  const EDGE = 600;             // px from an end of the transcript that loads the next chunk
  const FIND_DELAY = 250;       // ms of quiet typing before the filter asks the server
  const ASK_TIMEOUT = 30000;    // ms an ask may take: one that hangs must not hold the next load back
  const view = window.transcriptView;

  function transcript() { return document.getElementById("transcript"); }
  function box() { return document.getElementById("transcript-lines"); }
  function seqOf(line) { return parseInt(line.id.slice(3), 10); }           // id="ev-<seq>"
  function isLine(node) { return node.nodeType === 1 && node.classList.contains("ev"); }
  function keep() { return parseInt(box().dataset.keep, 10) || 5000; }
  function firstLine() { return box().querySelector(":scope > .ev"); }
  function lastLine() {
    for (let n = box().lastElementChild; n; n = n.previousElementSibling) if (isLine(n)) return n;
    return null;
  }

  const state = {
    attached: true,       // the window reaches the latest event: live lines are appended
    serverWindow: false,  // the socket replays an older window (?at=) and sends no live lines
    moreBefore: true,
    liveSeen: 0,          // the highest seq a live fragment brought (kept or dropped)
    busyBefore: false,
    busyAfter: false,
    generation: 0,        // bumped when the whole window is replaced: answers to older asks are dropped
    viewSeq: 0,           // the line at the top of the view (kept a few times a second while scrolling)
  };
  let observer = null;

  // --- following the newest line --------------------------------------------------------
  let following = true;
  function setFollowing(on) {
    if (on && !state.attached) { toTail(); return; }
    following = on;
    showFollowing(on);
    if (on) scrollDown();
  }
  function showFollowing(on) {
    const b = document.querySelector("[data-follow]");
    if (b) { b.setAttribute("aria-pressed", String(on)); b.textContent = on ? "Following" : "Paused"; }
  }
  // The page's own scroll to the bottom. Lines shown there for the first time take their real
  // height (out of view they had an estimate: content-visibility), which moves the bottom away:
  // following stops only when the person scrolls up (above where the page last put the view).
  let ownTop = -1;
  function scrollDown() {
    const t = transcript();
    if (!t) return;
    t.scrollTop = t.scrollHeight;
    ownTop = t.scrollTop;
  }

  // --- the view stays on the line it shows while lines come and go above it ---------------
  // The first line shown at the transcript's top (one layout, then reads; hidden lines skipped).
  function anchorLine() {
    const top = transcript().getBoundingClientRect().top;
    for (let n = box().firstElementChild; n; n = n.nextElementSibling) {
      if (!isLine(n) || n.hidden) continue;
      if (n.getBoundingClientRect().bottom > top) return n;
    }
    return null;
  }
  function keepingAnchor(change) {
    const t = transcript();
    const anchor = anchorLine();
    const top = anchor ? anchor.getBoundingClientRect().top : 0;
    change();
    if (anchor && anchor.isConnected) t.scrollTop += anchor.getBoundingClientRect().top - top;
  }

  // --- lines in and out (our own changes: the observer does not see them) --------------------
  function parse(html) {
    const tpl = document.createElement("template");
    tpl.innerHTML = html;
    return Array.from(tpl.content.children).filter((n) => isLine(n) && !document.getElementById(n.id));
  }
  function insertTop(nodes) {
    const first = firstLine();
    const frag = document.createDocumentFragment();
    frag.append(...nodes);
    if (first) box().insertBefore(frag, first); else box().append(frag);
    settle(nodes, first);
  }
  function insertBottom(nodes) {
    box().append(...nodes);
    settle(nodes, null);
  }
  function settle(nodes, next) {
    observer.takeRecords();
    if (nodes.length) view.added(next ? [...nodes, next] : nodes, []);
    observer.takeRecords();
  }
  function trimBottom() {
    const b = box();
    let extra = b.children.length - keep();
    while (extra-- > 0) {
      const last = lastLine();
      if (!last || last === firstLine()) break;
      last.remove();
      state.attached = false;
    }
    observer.takeRecords();
  }
  function trimTop() {
    const b = box();
    let extra = b.children.length - keep();
    while (extra-- > 0 && b.firstElementChild) {
      b.firstElementChild.remove();
      state.moreBefore = true;
    }
    observer.takeRecords();
  }
  function olderNote() { return box().querySelector(":scope > p.older:not(.cleared):not(.ev-skipped)"); }

  async function ask(url, params) {
    const u = new URL(url, location.href);
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, String(v));
    const response = await fetch(u, {
      credentials: "same-origin", headers: { Accept: "application/json" }, signal: AbortSignal.timeout(ASK_TIMEOUT),
    });
    if (!response.ok) throw new Error(`${u.pathname}: ${response.status}`);
    return response.json();
  }
  function linesUrl() { return box().dataset.linesUrl; }

  // --- scrolling: earlier lines above, later ones below when the window left the tail --------
  async function loadEarlier() {
    const first = firstLine();
    if (state.busyBefore || !state.moreBefore || view.cleared() || !first || !linesUrl()) return;
    state.busyBefore = true;
    const generation = state.generation;
    try {
      const data = await ask(linesUrl(), { before: seqOf(first), limit: CHUNK });
      if (generation !== state.generation || firstLine() !== first) return;
      if (following && state.attached) return;  // (the view went back to the latest lines meanwhile)
      keepingAnchor(() => { insertTop(parse(data.html)); trimBottom(); });
      state.moreBefore = data.more_before;
      if (!state.moreBefore) { const note = olderNote(); if (note) { keepingAnchor(() => { note.remove(); observer.takeRecords(); }); } }
    } catch (err) {
      console.warn("transcript: earlier lines", err);
    } finally {
      state.busyBefore = false;
    }
  }

  async function loadLater() {
    const last = lastLine();
    if (state.busyAfter || state.attached || state.serverWindow || !last || !linesUrl()) return;
    state.busyAfter = true;
    const generation = state.generation;
    let again = false;
    try {
      const data = await ask(linesUrl(), { after: seqOf(last), limit: CHUNK });
      if (generation !== state.generation || lastLine() !== last) return;
      if (following) { insertBottom(parse(data.html)); trimTop(); scrollDown(); }  // catching up with the tail
      else keepingAnchor(() => { insertBottom(parse(data.html)); trimTop(); });
      const reached = data.last === null ? seqOf(last) : data.last;
      if (!data.more_after && state.liveSeen <= reached) state.attached = true;
      else again = !data.more_after;  // live lines came meanwhile: fetch them too
    } catch (err) {
      console.warn("transcript: later lines", err);
    } finally {
      state.busyAfter = false;
    }
    if (again) loadLater();
  }

  // The whole window replaced by the lines around `params` (around=SEQ, or the latest).
  async function replaceWindow(params) {
    const generation = ++state.generation;
    const data = await ask(linesUrl(), { limit: CHUNK * 2, ...params });
    if (generation !== state.generation) return false;
    const tpl = document.createElement("template");
    tpl.innerHTML = data.html;
    const nodes = Array.from(tpl.content.children).filter(isLine);
    box().replaceChildren(...nodes);
    delete box().dataset.target;
    settle(nodes, null);
    state.moreBefore = data.more_before;
    state.serverWindow = false;
    const reached = data.last === null ? 0 : data.last;
    state.attached = !data.more_after && state.liveSeen <= reached;
    if (!state.attached && !data.more_after) loadLater();
    return true;
  }

  // Back to line `seq` at the top of the view, loading the lines around it if the replay has not.
  async function restoreView(seq) {
    if (!document.getElementById("ev-" + seq)) {
      try {
        if (!(await replaceWindow({ around: seq }))) return;
      } catch (err) {
        console.warn("transcript: lines around", seq, err);
        return;
      }
    }
    const line = document.getElementById("ev-" + seq);
    const t = transcript();
    if (line) t.scrollTop += line.getBoundingClientRect().top - t.getBoundingClientRect().top;
  }

  async function openAt(seq) {
    try {
      if (!(await replaceWindow({ around: seq }))) return;
    } catch (err) {
      console.warn("transcript: lines around", seq, err);
      return;
    }
    following = true;
    setFollowing(false);
    const line = document.getElementById("ev-" + seq);
    if (line) window.transcriptTarget.show(line);   // transcript_target.js
  }

  // The session's first lines (the button "First line"): no scrolling through the whole session.
  async function toStart() {
    try {
      if (!(await replaceWindow({ around: 1 }))) return;
    } catch (err) {
      console.warn("transcript: first lines", err);
      return;
    }
    following = true;
    setFollowing(false);
    transcript().scrollTop = 0;
  }

  // The latest lines, one load at a time: asked again while one is in flight (a click, the filter
  // cleared, a flood's lines arriving), the load in flight answers it. Lines that arrive during it
  // are fetched after it (loadLater) while the view follows; it never starts itself again.
  let tailing = null;
  function toTail() {
    if (!tailing) tailing = loadTail().finally(() => { tailing = null; });
    return tailing;
  }
  async function loadTail() {
    try {
      if (!(await replaceWindow({}))) return;
    } catch (err) {
      console.warn("transcript: latest lines", err);
      return;
    }
    following = true;
    showFollowing(true);
    scrollDown();
  }

  // --- what the socket swaps in: live lines, or the replay on (re)connect ---------------------
  function swapped(records) {
    const added = records.flatMap((r) => Array.from(r.addedNodes)).filter((n) => n.nodeType === 1);
    const removed = records.flatMap((r) => Array.from(r.removedNodes)).filter((n) => n.nodeType === 1);
    const addedLines = added.filter(isLine);
    for (const line of addedLines) state.liveSeen = Math.max(state.liveSeen, seqOf(line));
    if (removed.some((n) => isLine(n) || n.matches("p.older"))) {
      // The replay: the latest lines (or the page's ?at= window) from the database. A person
      // reading older lines (a hidden tab's socket closed and opened again) keeps them.
      // A load of the latest lines in flight (the person asked for them) is answered by the
      // replay: it has them (and the load's answer, now of an older generation, is dropped).
      const reading = !following && !tailing && !view.cleared() ? state.viewSeq : 0;
      state.generation++;
      state.serverWindow = box().querySelector(":scope > p.window-note") !== null;
      state.attached = !state.serverWindow;
      const first = firstLine();
      state.moreBefore = !!first && seqOf(first) > 1;
      view.added(added, removed);
      if (reading && !state.serverWindow) restoreView(reading);
      if (tailing && state.attached) { following = true; showFollowing(true); }
    } else if (state.attached || state.serverWindow) {
      view.added(added, removed);
      if (box().children.length > keep()) { if (following) trimTop(); else keepingAnchor(trimTop); }
    } else {
      addedLines.forEach((line) => line.remove());   // after a window that left the tail: loaded when scrolled to
    }
    observer.takeRecords();
    if (following) scrollDown();
  }

  function watch() {
    const container = box();
    const t = transcript();
    if (!container || !t || container._windowed) return;
    container._windowed = true;
    observer = new MutationObserver(swapped);
    observer.observe(container, { childList: true });
    const first = firstLine();
    state.moreBefore = !!first && seqOf(first) > 1;
    state.serverWindow = container.querySelector(":scope > p.window-note") !== null;
    state.attached = !state.serverWindow;
    const last = lastLine();
    state.liveSeen = last ? seqOf(last) : 0;
    let viewTimer = null;
    // A change of the transcript's size (the window resized, the columns stacked) moves or clamps
    // its scroll position: that is not the person scrolling up, and a followed transcript stays
    // at its bottom.
    // The observer and the scroll handler each keep the size they last saw: the scroll event of
    // a clamp can come after the observer has run, and must still read as a resize (with one
    // memory, the observer used it up and the clamp paused the view).
    const sizeNow = () => [t.clientWidth, t.clientHeight];
    const changedSince = (seen) => {
      const now = sizeNow();
      const changed = now[0] !== seen.size[0] || now[1] !== seen.size[1];
      seen.size = now;
      return changed;
    };
    const seenByObserver = { size: sizeNow() };
    const seenByScroll = { size: sizeNow() };
    new ResizeObserver(() => { if (changedSince(seenByObserver) && following && state.attached) scrollDown(); }).observe(t);
    t.addEventListener("scroll", () => {
      const resized = changedSince(seenByScroll);
      if (viewTimer === null) {
        viewTimer = setTimeout(() => { viewTimer = null; const a = anchorLine(); state.viewSeq = a ? seqOf(a) : 0; }, 150);
      }
      const fromBottom = t.scrollHeight - t.scrollTop - t.clientHeight;
      // (Following while the window catches up with the tail: at its bottom, loadLater brings the rest.)
      const atBottom = fromBottom < 24 && (state.attached || (following && !state.serverWindow));
      if (following && !atBottom && (t.scrollTop >= ownTop - 1 || resized)) scrollDown();  // the bottom moved
      else if (atBottom !== following) setFollowing(atBottom);
      // Earlier lines load as the person scrolls up, not while the view follows the latest ones:
      // above a replay still arriving (its first lines alone fill no screen) they pushed its
      // last lines out of the window, which then stopped at the middle of the replay.
      if (t.scrollTop < EDGE && !following) loadEarlier();
      if (fromBottom < EDGE && !state.attached) loadLater();
    });
    scrollDown();
  }

  // --- the filter over the whole session ---------------------------------------------------
  let findTimer = null;
  let findAsked = 0;
  function matchesBox() { return document.getElementById("transcript-matches"); }
  function findUrl() { const b = box(); return b && b.dataset.findUrl; }

  function showMatches(data, append) {
    const panel = matchesBox();
    if (!panel) return;
    let list = panel.querySelector("ol");
    if (!append || !list) {
      panel.replaceChildren();
      const head = document.createElement("p");
      head.className = "matches-head dim";
      panel.append(head);
      list = document.createElement("ol");
      panel.append(list);
    }
    for (const hit of data.hits) {
      const li = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.className = "match";
      button.dataset.openSeq = String(hit.seq);
      const where = document.createElement("span");
      where.className = "match-where";
      where.textContent = `${hit.arrow} #${hit.seq} ${hit.label}`;
      const excerpt = document.createElement("span");
      excerpt.className = "match-excerpt";
      excerpt.innerHTML = hit.excerpt;   // escaped by the server, its matches in <mark>
      button.append(where, " ", excerpt);
      li.append(button);
      list.append(li);
    }
    const old = panel.querySelector("[data-more-matches]");
    if (old) old.remove();
    if (data.more_before) {
      const more = document.createElement("button");
      more.type = "button";
      more.className = "small";
      more.dataset.moreMatches = String(data.more_before);
      more.textContent = "More matches";
      panel.append(more);
    }
    const count = list.children.length;
    const head = panel.querySelector(".matches-head");
    head.textContent = !data.available
      ? "Searching the whole session is not available on this database: the filter shows the lines on the page."
      : `${count}${data.more_before ? "+" : ""} match${count === 1 ? "" : "es"} in the whole session`
        + (data.pending ? " (the newest events are not searchable yet)" : "")
        + (count ? ": choose one to show it in place." : ".");
    panel.hidden = false;
  }

  async function find(text, before) {
    const asked = ++findAsked;
    const url = findUrl();
    if (!url) return;
    try {
      const params = { q: text };
      if (before) params.before = before;
      const data = await ask(url, params);
      if (asked !== findAsked) return;
      showMatches(data, Boolean(before));
    } catch (err) {
      console.warn("transcript: filter", err);
    }
  }

  function filterTyped(input) {
    clearTimeout(findTimer);
    const text = input.value.trim();
    if (!text) {
      findAsked++;
      const panel = matchesBox();
      if (panel) { panel.hidden = true; panel.replaceChildren(); }
      if (!state.attached || document.querySelector("#transcript-lines > .ev-target")) toTail();
      return;
    }
    findTimer = setTimeout(() => find(text), FIND_DELAY);
  }

  document.addEventListener("input", (e) => {
    if (e.target.matches && e.target.matches("[data-transcript-filter]")) filterTyped(e.target);
  });
  document.addEventListener("click", (e) => {
    const b = e.target.closest && e.target.closest("button");
    if (!b) return;
    if (b.matches("[data-follow]")) setFollowing(!following);
    if (b.matches("[data-first-line]")) toStart();
    if (b.matches("[data-open-seq]")) openAt(parseInt(b.dataset.openSeq, 10));
    if (b.matches("[data-more-matches]")) {
      const input = document.querySelector("[data-transcript-filter]");
      if (input && input.value.trim()) find(input.value.trim(), b.dataset.moreMatches);
    }
  });

  // The page's socket says what the page was served with (?shown=: its lines are that window, so
  // the first connect does not send them again). Once it has opened, a reconnect (a hidden tab's)
  // asks for the replay as before: the lines may have moved since.
  document.addEventListener("htmx:ws:after:connection", (e) => {
    const connection = e.detail && e.detail.connection;
    if (!connection || typeof connection.url !== "string") return;
    const url = new URL(connection.url);
    if (!url.searchParams.has("shown")) return;
    url.searchParams.delete("shown");
    connection.url = url.toString();
  });

  document.addEventListener("htmx:after:swap", watch);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watch);
  else watch();

  window.transcriptWindow = { openAt, toStart, toTail, state };
})();
