// The Model view panel (sessions/features/model_view.py) is fetched only while it is open. Its
// loader reaches every tab at every catalogue change and every reconnect; a closed panel keeps
// it until the person opens the panel, and an open one fetches it at once.
(function () {
  "use strict";
  function load() {
    const loader = document.querySelector("details.model-view-panel[open] #model-view[data-model-view-url]");
    if (!loader || loader.dataset.loading) return;
    loader.dataset.loading = "1";
    htmx.ajax("GET", loader.dataset.modelViewUrl, { source: loader, target: loader, swap: "outerHTML" });
  }
  function start() {
    const panel = document.querySelector("details.model-view-panel");
    if (!panel) return;
    panel.addEventListener("toggle", () => { if (panel.open) load(); });
    new MutationObserver(load).observe(panel, { childList: true });     // a loader swapped in
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
