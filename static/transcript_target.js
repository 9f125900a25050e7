// A transcript line opened from a search (/sessions/N/?at=SEQ): the page shows the events
// around it (#transcript-lines[data-target]); this opens the line, marks it and scrolls the
// transcript to it — again after the websocket's replay replaced the lines — and stops the
// transcript from following new lines (the "Following" button is pressed off).
(function () {
  "use strict";
  let marked = null;

  function reveal(line) {
    const box = document.getElementById("transcript");
    if (!box || box.scrollHeight <= box.clientHeight) { line.scrollIntoView({ block: "center" }); return; }
    // Only the transcript scrolls (scrollIntoView would move the page under its header too).
    box.scrollTop += line.getBoundingClientRect().top - box.getBoundingClientRect().top - box.clientHeight / 3;
  }

  function mark() {
    const lines = document.getElementById("transcript-lines");
    const id = lines && lines.dataset.target;
    const line = id && document.getElementById(id);
    if (!line || line === marked) return;
    marked = line;
    const follow = document.querySelector('[data-follow][aria-pressed="true"]');
    if (follow) follow.click();
    line.classList.add("ev-target");
    line.open = true;
    reveal(line);
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
})();
