// The session's state strip, beyond what the server renders: the time spent connecting
// (counted here from the session's start), and the page's actions disabled once the session
// has failed or ended (Ping, Raw request, Call tool, …; Reconnect, Share and the exports stay).
(function () {
  "use strict";
  function strip() { return document.getElementById("session-state"); }
  function ended() {
    const s = strip();
    return !!s && (s.classList.contains("status-ended") || s.classList.contains("status-failed"));
  }

  function tick() {
    document.querySelectorAll("#session-state .elapsed[data-since]").forEach((el) => {
      const since = Number(el.dataset.since);
      if (since) el.textContent = Math.max(0, Date.now() / 1000 - since).toFixed(1) + " s";
    });
  }

  // Controls that act on the live connection: every form sent over the session's socket, and
  // what is marked data-live-only (the Raw request composer's buttons).
  const ACTING = "#live [hx-ws\\:send] button, #live [hx-ws\\:send] input:not([type=hidden]), " +
    "#live [hx-ws\\:send] select, #live [hx-ws\\:send] textarea, [data-live-only]";
  function syncLive() {
    const off = ended();
    document.querySelectorAll(ACTING).forEach((el) => {
      if (off && !el.disabled) { el.disabled = true; el.dataset.endedDisabled = ""; }
      else if (!off && el.hasAttribute("data-ended-disabled")) { el.disabled = false; delete el.dataset.endedDisabled; }
    });
    const live = document.getElementById("live");
    if (live) live.classList.toggle("session-over", off);
  }

  function start() { tick(); syncLive(); }
  setInterval(tick, 250);
  document.addEventListener("htmx:after:swap", syncLive);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
