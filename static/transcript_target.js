// A transcript line shown as the target: opened, marked (the only one) and scrolled to. Two ways
// lead there: a line opened from a search (/sessions/N/?at=SEQ: the page shows the events around
// it, #transcript-lines[data-target], marked again after the websocket's replay replaced the lines,
// and the transcript stops following new lines: the "Following" button is pressed off), and a
// filter's match opened in place (transcript_window.js's openAt calls `show`).
(function () {
  "use strict";
  let marked = null;

  function reveal(line) {
    const box = document.getElementById("transcript");
    if (!box || box.scrollHeight <= box.clientHeight) { line.scrollIntoView({ block: "center" }); return; }
    // Only the transcript scrolls (scrollIntoView would move the page under its header too).
    box.scrollTop += line.getBoundingClientRect().top - box.getBoundingClientRect().top - box.clientHeight / 3;
  }

  // The line marked, opened (shown even if the filter hid it) and scrolled to.
  function show(line) {
    document.querySelectorAll("#transcript-lines > .ev-target").forEach((l) => { if (l !== line) l.classList.remove("ev-target"); });
    line.hidden = false;
    line.classList.add("ev-target");
    line.open = true;
    reveal(line);
  }

  function mark() {
    const lines = document.getElementById("transcript-lines");
    const id = lines && lines.dataset.target;
    const line = id && document.getElementById(id);
    if (!line || line === marked) return;
    marked = line;
    const follow = document.querySelector('[data-follow][aria-pressed="true"]');
    if (follow) follow.click();
    show(line);
  }

  function watch() {
    const lines = document.getElementById("transcript-lines");
    if (!lines || !lines.dataset.target || lines._targetWatched) return;
    lines._targetWatched = true;
    new MutationObserver(mark).observe(lines, { childList: true });
    mark();
  }

  document.addEventListener("DOMContentLoaded", watch);
  if (document.readyState !== "loading") watch();

  window.transcriptTarget = { show };
})();
