// The MCP Apps sandbox proxy: served on the sandbox origin only (playground/core/sandbox.py),
// framed by the playground's page (its origin is `host`, which the page's header allows as the
// only frame ancestor). It follows the spec's handshake: says `sandbox-proxy-ready` to the page,
// takes `sandbox-resource-ready` (the app's HTML) once, and loads it into a frame of its own
// (`srcdoc`: it inherits this page's policy, the app's CSP; sandboxed without
// allow-same-origin: an opaque origin). Then it relays, unchanged: the page's messages to the
// app, the app's to the page — at most RATE a second (a flood is dropped here and counted).
(() => {
  "use strict";
  const host = new URLSearchParams(location.search).get("host");
  if (!host || window.parent === window) return;
  const RATE = 200;
  const BURST = 400;
  // The spec's `_meta.ui.permissions` member -> Permissions Policy feature (the page carries the one map: mcp/apps/policy.py).
  const PERMISSIONS = JSON.parse(document.body.dataset.permissions || "{}");
  let inner = null;
  const bucket = window.tokenBucket(RATE, BURST); // (static/token-bucket.js, loaded before this)
  let dropped = 0;
  let reported = 0;

  function load(params) {
    if (inner || !params || typeof params.html !== "string") return;
    inner = document.createElement("iframe");
    inner.setAttribute("sandbox", "allow-scripts allow-forms");
    const granted = params.permissions && typeof params.permissions === "object" ? params.permissions : {};
    const allow = Object.keys(PERMISSIONS).filter((k) => k in granted).map((k) => PERMISSIONS[k]).join("; ");
    if (allow) inner.setAttribute("allow", allow);
    inner.setAttribute("title", "MCP App");
    inner.srcdoc = params.html;
    document.body.appendChild(inner);
  }

  function admit() {
    if (bucket.take()) return true;
    dropped++;
    return false;
  }

  setInterval(() => {
    if (dropped !== reported) {
      reported = dropped;
      window.parent.postMessage({ "playground-sandbox": { dropped } }, host);
    }
  }, 1000);

  window.addEventListener("message", (e) => {
    if (e.source === window.parent && e.origin === host) {
      const m = e.data;
      if (m && m.method === "ui/notifications/sandbox-resource-ready") load(m.params);
      else if (inner && inner.contentWindow) inner.contentWindow.postMessage(m, "*");
    } else if (inner && e.source === inner.contentWindow && admit()) {
      // The proxy's own count is ours to send: an app's message carrying its key is dropped.
      const d = e.data;
      if (d && typeof d === "object" && !Array.isArray(d) && "playground-sandbox" in d) return;
      window.parent.postMessage(e.data, host);
    }
  });
  window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, host);
})();
