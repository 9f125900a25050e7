// The session page's small behaviours htmx cannot do: catalogue search (kept across new catalogues), the panels' state
// (answers to server requests are server_requests.js's, shared with the chat). The workspace (forms, completion, keyboard) is workspace.js's.
(function () {
  "use strict";
  // The transcript's window (loading, following, the filter over the whole session):
  // static/transcript_window.js; times, the filter's view of lines and Clear: transcript-view.js.
  const view = window.transcriptView;
  function refilter() { view.refilter(); }

  // --- a new server request scrolls into view: the person must see that they are asked ----
  function watchRequests() {
    const box = document.getElementById("server-requests");
    if (!box || box._watched) return;
    box._watched = true;
    new MutationObserver((records) => {
      for (const r of records) r.addedNodes.forEach((n) => {
        if (n.nodeType === 1 && n.matches(".server-request")) n.scrollIntoView({ block: "nearest" });
      });
      markAsking();
    }).observe(box, { childList: true });
  }
  // A call in flight whose input round waits for the person says so (not "waiting for the response").
  function markAsking() {
    const asking = new Set(Array.from(document.querySelectorAll("#server-requests .server-request[data-call]"))
      .map((card) => card.dataset.call));
    document.querySelectorAll("#inflight .inflight").forEach((call) => {
      call.classList.toggle("asking", asking.has(call.id.replace(/^call-/, "")));
    });
  }

  // --- the session's request timeout: the field follows the worker's value ----------------
  function syncTimeout() {
    const state = document.getElementById("timeout-state");
    const input = document.querySelector("[data-session-timeout]");
    if (state && input && state.dataset.timeout && document.activeElement !== input) {
      input.value = String(Number(state.dataset.timeout));
    }
  }

  // --- the log level select shows the level the server accepted, each time the state says ----
  let levelShown = null;
  function syncLogLevel() {
    const state = document.querySelector("#log-state [data-level]");
    const select = document.getElementById("log-level");
    if (!state || !select || state === levelShown) return;
    levelShown = state;
    select.value = state.dataset.level;
  }

  // --- a resource's Subscribe button in the catalogue says whether it is subscribed ---------
  function syncSubscriptions() {
    const subscribed = new Set(Array.from(document.querySelectorAll("#subs-state [data-subscribed]"))
      .map((li) => li.dataset.subscribed));
    document.querySelectorAll("#catalogue form[data-subscribe]").forEach((form) => {
      const on = subscribed.has(form.dataset.subscribe);
      form.querySelector("[name=action]").value = on ? "unsubscribe" : "subscribe";
      const button = form.querySelector("button");
      button.textContent = on ? "Unsubscribe" : "Subscribe";
      button.title = (on ? "resources/unsubscribe " : "resources/subscribe ") + form.dataset.subscribe;
    });
  }

  // --- a new result scrolls into view (a long form would otherwise hide it) ----------
  function watchResult() {
    const col = document.querySelector(".work-col");
    if (!col || col._watched) return;
    col._watched = true;
    new MutationObserver((records) => {
      const res = document.getElementById("result");
      if (!res || res.querySelector(":scope > p.dim")) return;   // still the placeholder
      if (records.some((r) => r.target === res || res.contains(r.target) || Array.from(r.addedNodes).includes(res))) {
        res.scrollIntoView({ block: "nearest" });
      }
    }).observe(col, { childList: true, subtree: true });
  }

  // --- the catalogue's search outlives a new catalogue --------------------------------------
  // Its box is part of the catalogue the socket swaps in (a refresh, lists the server changed, a
  // reconnect's replay): what the person typed, the caret and the focus go over to the new box,
  // and the new lists are filtered by it.
  let search = { value: "", focused: false, start: 0, end: 0 };
  function filterCatalogue(value) {
    const q = value.trim().toLowerCase();
    document.querySelectorAll("#catalogue li[data-search]").forEach((li) => { li.hidden = q && !li.dataset.search.includes(q); });
  }
  function keepSearch(el) {
    search = { value: el.value, focused: document.activeElement === el, start: el.selectionStart, end: el.selectionEnd };
  }
  function carrySearch() {
    const box = document.querySelector("#catalogue [data-filter-catalogue]");
    if (!box || box._carried) return;
    box._carried = true;
    if (!search.value && !search.focused) return;
    box.value = search.value;
    filterCatalogue(box.value);
    // (Unless the person has gone elsewhere meanwhile: the old box took the focus with it.)
    if (search.focused && (document.activeElement === document.body || document.activeElement === null)) {
      box.focus();
      box.setSelectionRange(search.start, search.end);
    }
  }
  for (const type of ["keyup", "mouseup", "focusin"]) {
    document.addEventListener(type, (e) => { if (e.target.matches && e.target.matches("[data-filter-catalogue]")) keepSearch(e.target); });
  }
  document.addEventListener("focusout", (e) => {
    const el = e.target;
    // A box taken out by a swap keeps its focus for the new one; one the person left does not.
    if (el.matches && el.matches("[data-filter-catalogue]")) queueMicrotask(() => { if (el.isConnected) search.focused = false; });
  });

  document.addEventListener("input", (e) => {
    const el = e.target;
    if (el.matches("[data-transcript-filter]")) refilter();
    if (el.matches("[data-filter-catalogue]")) {
      keepSearch(el);
      filterCatalogue(el.value);
    }
  });
  document.addEventListener("change", (e) => {
    const el = e.target;
    if (el.matches("[data-dir-filter]")) refilter();
    if (el.matches("[data-auto-refresh]")) el.closest("form").requestSubmit();
    if (el.matches("[data-session-timeout]") && el.checkValidity()) el.closest("form").requestSubmit();
  });
  // Answers to server requests (the cards of sessions/features/server_request.html): server_requests.js.

  // --- elapsed time of calls in flight ------------------------------------------------
  setInterval(() => {
    document.querySelectorAll(".inflight [data-started]").forEach((el) => {
      const started = Number(el.dataset.started);
      if (started) el.textContent = Math.max(0, (Date.now() - started) / 1000).toFixed(1) + " s";
    });
  }, 250);

  // --- notification and log panels keep their last entries ----------------------------
  const MAX_FEED = 500;
  function trimFeeds() {
    document.querySelectorAll("ol.feed").forEach((ol) => {
      while (ol.children.length > MAX_FEED) ol.firstElementChild.remove();
    });
  }

  document.addEventListener("htmx:after:swap", () => { trimFeeds(); syncTimeout(); syncLogLevel(); syncSubscriptions(); markAsking(); carrySearch(); });
  // "exports: include secrets": the export links ask for them (?secrets=1) only while it is ticked.
  function exportSecrets() {
    const box = document.getElementById("export-secrets");
    if (!box) return;
    const update = () => document.querySelectorAll("a[data-export]").forEach((a) => {
      const url = new URL(a.href, location.href);
      if (box.checked) url.searchParams.set("secrets", "1"); else url.searchParams.delete("secrets");
      a.href = url.pathname + url.search;
    });
    box.addEventListener("change", update);
    update();
  }

  document.addEventListener("DOMContentLoaded", () => {
    watchResult(); watchRequests(); refilter(); exportSecrets();
  });
  if (document.readyState !== "loading") { watchResult(); watchRequests(); }
})();
