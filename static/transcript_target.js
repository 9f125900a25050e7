// A transcript line opened from a search (/sessions/N/?at=SEQ): the page shows the events
// around it (#transcript-lines[data-target]); this opens the line, marks it and scrolls it to
// the middle of the transcript — again after the websocket's replay replaced the lines — and
// stops the transcript from following new lines (the "Following" button is pressed off).
(function () {
  "use strict";
  let marked = null;

  function mark() {
    const box = document.getElementById("transcript-lines");
    const id = box && box.dataset.target;
    const line = id && document.getElementById(id);
    if (!line || line === marked) return;
    marked = line;
    const follow = document.querySelector('[data-follow][aria-pressed="true"]');
    if (follow) follow.click();
    line.classList.add("ev-target");
    line.open = true;
    line.scrollIntoView({ block: "center" });
  }

  function watch() {
    const box = document.getElementById("transcript-lines");
    if (!box || !box.dataset.target || box._targetWatched) return;
    box._targetWatched = true;
    new MutationObserver(mark).observe(box, { childList: true });
    mark();
  }

  document.addEventListener("DOMContentLoaded", watch);
  if (document.readyState !== "loading") watch();
})();
