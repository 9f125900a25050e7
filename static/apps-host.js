// MCP Apps, the host side of the bridge (features/apps.py is the worker's side).
//
// A Result of a tool with a UI has a `[data-app-call]` place: this script asks the worker for the
// app (`app_open`: the ui:// resource, read through the session), frames the sandbox proxy on the
// sandbox origin (core/sandbox.py, static/apps-sandbox.js), hands it the HTML, and speaks the
// bridge: ui/initialize with the host context, the tool's input and result, the app's tools/call
// and resources/read (made by the worker, on the session's client), ui/message, ui/open-link
// (asked first), display modes, sizes, logs, teardown when the Result is replaced.
//
// Every bridge message, both ways, goes to the worker (`app_frame`) and is recorded in the
// transcript's "app" lane. What the app sends is untrusted: at most RATE messages a second are
// taken (BURST at once), none over MAX_BYTES once serialized, malformed JSON-RPC is answered with
// an error; what is dropped is counted, shown under the app, and noted in the transcript. The app
// runs on another site, in a frame of its own: it cannot reach this page's document.
(() => {
  "use strict";
  const form = document.getElementById("app-bridge");
  const inbox = document.getElementById("app-inbox");
  if (!form || !inbox) return;
  // The sandbox's exact origin, as the browser names it (computed once, by core/sandbox.py).
  const SANDBOX = form.dataset.appsSandbox || "";
  const RATE = 50;
  const BURST = 100;
  const MAX_BYTES = 256 * 1024;
  const MAX_SAID = 50;
  const PROTOCOL = "2026-01-26";
  // Permissions Policy feature -> the spec's `_meta.ui.permissions` member (the one map: mcp/apps/policy.py).
  const PERMISSIONS = Object.fromEntries(Object.entries(JSON.parse(form.dataset.appsPermissions || "{}")).map(([key, feature]) => [feature, key]));
  const apps = new Map(); // instance id -> App
  const pieces = new Map(); // message id -> parts

  function submit(fields) {
    for (const name of ["action", "instance", "call_id", "direction", "frame", "perform"]) {
      form.elements[name].value = fields[name] || "";
    }
    form.requestSubmit();
  }

  function textOf(blocks) {
    if (!Array.isArray(blocks)) return "";
    return blocks.map((b) => (b && b.type === "text" && typeof b.text === "string" ? b.text : b && b.type ? `[${b.type}]` : "")).join(" ");
  }

  class App {
    constructor(el) {
      this.el = el;
      this.call = el.dataset.appCall;
      this.id = "app-" + Math.random().toString(36).slice(2, 10);
      this.status = el.querySelector(".app-status");
      this.counts = el.querySelector(".app-counts");
      this.slot = el.querySelector(".app-slot");
      this.said = el.querySelector(".app-said");
      this.ask = el.querySelector(".app-ask");
      this.bucket = window.tokenBucket(RATE, BURST);
      this.taken = 0;
      this.dropped = { rate: 0, size: 0, malformed: 0, proxy: 0 };
      this.noted = "";
      this.hostIds = 0;
      this.mode = "inline";
      this.granted = new Set();
      this.frame = null;
      this.doc = null;
      el.dataset.appInstance = this.id;
      if (!SANDBOX || SANDBOX === location.origin) {
        this.setStatus("not run: the sandbox origin is this page's own (PLAYGROUND_APPS_SANDBOX)");
        return;
      }
      submit({ action: "app_open", instance: this.id, call_id: this.call });
    }

    setStatus(text) { if (this.status) this.status.textContent = text; }

    showCounts() {
      const d = this.dropped;
      const drops = d.rate + d.size + d.malformed + d.proxy;
      const text = `${this.taken} from the app` + (drops ? ` · dropped: ${d.rate} over ${RATE}/s, ${d.size} over ${MAX_BYTES / 1024} KB, ${d.malformed} malformed, ${d.proxy} by the sandbox proxy` : "");
      if (this.counts) this.counts.textContent = " · " + text;
      if (drops && !this.noteTimer) {
        this.noteTimer = setTimeout(() => {
          this.noteTimer = null;
          const note = `page: ${JSON.stringify(this.dropped)} messages from the app dropped (rate, size, malformed, by the proxy)`;
          if (note !== this.noted) { this.noted = note; submit({ action: "app_frame", instance: this.id, call_id: this.call, direction: "note", frame: note }); }
        }, 1000);
      }
    }

    say(kind, text) {
      if (!this.said) return;
      const li = document.createElement("li");
      const tag = document.createElement("span");
      tag.className = "app-said-kind";
      tag.textContent = kind;
      li.append(tag, " ", String(text).slice(0, 2000));
      this.said.appendChild(li);
      while (this.said.children.length > MAX_SAID) this.said.firstElementChild.remove();
    }

    // From the worker ---------------------------------------------------------------
    onReply(payload) {
      if (payload.kind === "open") return this.opened(payload);
      if (payload.kind === "reply") {
        if ("error" in payload) this.respond(payload.id, undefined, payload.error);
        else this.respond(payload.id, payload.result);
      }
    }

    opened(doc) {
      if (doc.error) { this.setStatus("not rendered: " + doc.error); return; }
      this.doc = doc;
      if ((doc.permissions || []).length) this.offerPermissions(doc.permissions);
      if ((doc.csp_rejected || []).length) this.say("csp", "left out of the app's policy: " + doc.csp_rejected.join("; "));
      this.render();
    }

    offerPermissions(wanted) {
      this.ask.hidden = false;
      this.ask.replaceChildren();
      const p = document.createElement("p");
      p.textContent = "The app asks for: ";
      for (const feature of wanted) {
        const label = document.createElement("label");
        const box = document.createElement("input");
        box.type = "checkbox";
        box.value = feature;
        label.append(box, " " + feature + " ");
        p.appendChild(label);
      }
      const again = document.createElement("button");
      again.type = "button";
      again.className = "small";
      again.textContent = "Reload the app with these";
      again.addEventListener("click", () => {
        this.granted = new Set([...p.querySelectorAll("input:checked")].map((b) => b.value));
        this.render();
      });
      p.appendChild(again);
      this.ask.appendChild(p);
    }

    render() {
      const doc = this.doc;
      const frame = document.createElement("iframe");
      const query = new URLSearchParams({ host: location.origin, csp: JSON.stringify(doc.csp || {}) });
      frame.src = `${SANDBOX}/sandbox/proxy?${query}`;
      frame.title = "MCP App " + this.el.dataset.appUri;
      frame.className = "app-frame" + (doc.prefers_border ? " bordered" : "");
      const allow = [...this.granted].join("; ");
      if (allow) frame.setAttribute("allow", allow);
      frame.setAttribute("referrerpolicy", "no-referrer");
      this.frame = frame;
      this.slot.replaceChildren(frame);
      this.setStatus("loading the sandbox");
    }

    // To and from the app -------------------------------------------------------------
    post(message, recorded) {
      if (!this.frame || !this.frame.contentWindow) return;
      this.frame.contentWindow.postMessage(message, SANDBOX);
      submit({ action: "app_frame", instance: this.id, call_id: this.call, direction: "send", frame: recorded || JSON.stringify(message) });
    }

    respond(id, result, error) {
      const message = error ? { jsonrpc: "2.0", id, error } : { jsonrpc: "2.0", id, result: result === undefined ? {} : result };
      this.post(message);
    }

    notify(method, params) { this.post({ jsonrpc: "2.0", method, params }); }

    request(method, params) { this.post({ jsonrpc: "2.0", id: "host-" + ++this.hostIds, method, params }); }

    receive(data) {
      if (data && typeof data === "object" && !Array.isArray(data) && data["playground-sandbox"]) {
        const n = Number(data["playground-sandbox"].dropped);
        if (Number.isFinite(n)) { this.dropped.proxy = n; this.showCounts(); }
        return;
      }
      if (!this.bucket.take()) { this.dropped.rate++; this.showCounts(); return; }
      let text;
      if (typeof data === "string") text = data.length > MAX_BYTES ? null : data;
      else {
        try { text = JSON.stringify(data); } catch (e) { text = undefined; }
      }
      if (text === null || (typeof text === "string" && text.length > MAX_BYTES)) {
        this.dropped.size++;
        this.showCounts();
        const id = data && typeof data === "object" ? data.id : undefined;
        if (id !== undefined && data.method) this.respond(id, undefined, { code: -32600, message: `refused by the host: over ${MAX_BYTES} bytes` });
        return;
      }
      if (typeof text !== "string") { this.dropped.malformed++; this.showCounts(); return; }
      let message = data;
      if (typeof data === "string") {
        try { message = JSON.parse(data); } catch (e) { message = undefined; }
      }
      this.taken++;
      const method = message && typeof message === "object" ? message.method : undefined;
      // Performed only for a well-formed request (one the page answers as malformed is not also run).
      const wellFormed = !!message && typeof message === "object" && !Array.isArray(message) && message.jsonrpc === "2.0";
      const perform = wellFormed && (method === "tools/call" || method === "resources/read");
      submit({ action: "app_frame", instance: this.id, call_id: this.call, direction: "recv", frame: text, perform: perform ? "1" : "" });
      this.showCounts();
      if (!message || typeof message !== "object" || Array.isArray(message) || message.jsonrpc !== "2.0") {
        this.dropped.malformed++;
        this.showCounts();
        if (message && typeof message === "object" && "id" in message && message.method) this.respond(message.id, undefined, { code: -32600, message: "not a JSON-RPC 2.0 message" });
        return;
      }
      if (typeof method === "string") this.handle(message, method);
    }

    handle(m, method) {
      const params = m.params && typeof m.params === "object" ? m.params : {};
      const isRequest = "id" in m;
      switch (method) {
        case "ui/notifications/sandbox-proxy-ready": {
          const granted = {};
          for (const f of this.granted) granted[PERMISSIONS[f]] = {};
          const html = this.doc.html;
          const message = { jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params: { html, csp: this.doc.csp || {}, permissions: granted } };
          // Recorded with the HTML left out: it is the resources/read result just above, whole.
          const recorded = JSON.stringify({ ...message, params: { ...message.params, html: `(${html.length} characters: the text of the resources/read result)` } });
          this.post(message, recorded);
          this.setStatus("running");
          return;
        }
        case "ui/initialize":
          this.respond(m.id, {
            protocolVersion: PROTOCOL,
            hostInfo: { name: "MCP Playground", version: "1" },
            hostCapabilities: {
              openLinks: {}, serverTools: {}, serverResources: {}, logging: {},
              message: { text: {} }, updateModelContext: { text: {} },
              sandbox: { csp: this.doc.csp || {}, permissions: Object.fromEntries([...this.granted].map((f) => [PERMISSIONS[f], {}])) },
            },
            hostContext: this.context(),
          });
          return;
        case "ui/notifications/initialized":
          this.ready = true;
          this.watchSize();
          this.notify("ui/notifications/tool-input", { arguments: this.doc.arguments || {} });
          if (this.doc.result && typeof this.doc.result === "object") this.notify("ui/notifications/tool-result", this.doc.result);
          return;
        case "tools/call":
        case "resources/read":
          return; // made by the worker (perform): its answer comes back as a reply
        case "ping":
          if (isRequest) this.respond(m.id, {});
          return;
        case "ui/message":
          this.say("ui/message", textOf(params.content));
          if (isRequest) this.respond(m.id, {});
          return;
        case "ui/update-model-context":
          this.say("model context", textOf(params.content) || JSON.stringify(params.structuredContent || {}).slice(0, 500));
          if (isRequest) this.respond(m.id, {});
          return;
        case "notifications/message":
          this.say("log " + String(params.level || ""), typeof params.data === "string" ? params.data : JSON.stringify(params.data));
          return;
        case "ui/open-link":
          if (isRequest) this.askToOpen(m.id, String(params.url || ""));
          return;
        case "ui/request-display-mode": {
          const mode = this.setMode(params.mode === "fullscreen" ? "fullscreen" : "inline");
          if (isRequest) this.respond(m.id, { mode });
          return;
        }
        case "ui/notifications/size-changed": {
          const h = Number(params.height);
          if (Number.isFinite(h) && this.frame && this.mode === "inline") this.frame.style.height = Math.max(40, Math.min(4000, Math.ceil(h))) + "px";
          return;
        }
        case "ui/notifications/request-teardown":
          this.request("ui/resource-teardown", {});
          return;
        default:
          if (isRequest) this.respond(m.id, undefined, { code: -32601, message: `method not found: ${method.slice(0, 100)}` });
      }
    }

    // Full screen covers the page but for the App's header, where "Back inline" always is.
    setMode(mode) {
      if (mode === this.mode) return mode;
      this.mode = mode;
      this.el.classList.toggle("app-fullscreen", mode === "fullscreen");
      let back = this.el.querySelector("header .app-inline");
      if (mode === "fullscreen" && !back) {
        back = document.createElement("button");
        back.type = "button";
        back.className = "small app-inline";
        back.textContent = "Back inline";
        back.addEventListener("click", () => this.setMode("inline"));
        this.el.querySelector("header").appendChild(back);
      } else if (mode === "inline" && back) back.remove();
      if (mode === "inline" && this.frame) this.frame.style.height = "";
      this.notify("ui/notifications/host-context-changed", { displayMode: mode });
      return mode;
    }

    askToOpen(id, url) {
      if (this.ask.querySelectorAll(".app-open-link").length >= 3) {
        this.respond(id, { isError: true }); // (three questions waiting: no more piled up)
        return;
      }
      const safe = /^https?:\/\//i.test(url);
      this.ask.hidden = false;
      const p = document.createElement("p");
      p.className = "app-open-link";
      p.append("The app asks to open ");
      const code = document.createElement("code");
      code.textContent = url.slice(0, 500);
      p.append(code, " ");
      const answer = (open) => {
        p.remove();
        if (!this.ask.children.length) this.ask.hidden = true;
        if (open && safe) window.open(url, "_blank", "noopener,noreferrer");
        this.respond(id, open && safe ? {} : { isError: true });
      };
      if (safe) {
        const yes = document.createElement("button");
        yes.type = "button"; yes.className = "small"; yes.textContent = "Open";
        yes.addEventListener("click", () => answer(true));
        p.append(yes, " ");
      } else p.append("(not an http(s) link: refused) ");
      const no = document.createElement("button");
      no.type = "button"; no.className = "small"; no.textContent = "Refuse";
      no.addEventListener("click", () => answer(false));
      p.append(no);
      this.ask.appendChild(p);
    }

    // The container's width followed (a resized window, a dragged column): told at most 4 times a second.
    watchSize() {
      if (this.sizes || !window.ResizeObserver) return;
      this.width = Math.round(this.slot.getBoundingClientRect().width);
      this.sizes = new ResizeObserver(() => {
        if (this.sizeTimer) return;
        this.sizeTimer = setTimeout(() => {
          this.sizeTimer = null;
          const width = Math.round(this.slot.getBoundingClientRect().width);
          if (!this.el.isConnected || !width || width === this.width) return;
          this.width = width;
          this.notify("ui/notifications/host-context-changed", { containerDimensions: { width, maxHeight: 4000 } });
        }, 250);
      });
      this.sizes.observe(this.slot);
    }

    context() {
      const width = Math.round(this.slot.getBoundingClientRect().width) || 600;
      return {
        toolInfo: { tool: this.doc.tool },
        theme: dark.matches ? "dark" : "light",
        displayMode: this.mode,
        availableDisplayModes: ["inline", "fullscreen"],
        containerDimensions: { width, maxHeight: 4000 },
        locale: navigator.language,
        timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
        userAgent: "MCP Playground",
        platform: "web",
      };
    }

    teardown(why) {
      if (this.sizes) this.sizes.disconnect();
      submit({ action: "app_frame", instance: this.id, call_id: this.call, direction: "note", frame: "app torn down: " + why });
      apps.delete(this.id);
    }
  }

  // The theme follows the page (the browser's colour scheme): running apps are told.
  const dark = matchMedia("(prefers-color-scheme: dark)");
  dark.addEventListener("change", () => {
    for (const app of apps.values()) if (app.ready) app.notify("ui/notifications/host-context-changed", { theme: dark.matches ? "dark" : "light" });
  });

  // The app's messages: only from a frame of ours, on the sandbox origin.
  window.addEventListener("message", (e) => {
    if (e.origin !== SANDBOX) return;
    for (const app of apps.values()) {
      if (app.frame && e.source === app.frame.contentWindow) { app.receive(e.data); return; }
    }
  });

  // The worker's answers: JSON in pieces (features/apps.py `_reply`).
  function takeInbox() {
    for (const pre of [...inbox.querySelectorAll("pre[data-app-message]")]) {
      pre.remove();
      const id = pre.dataset.appMessage;
      const count = Number(pre.dataset.parts) || 1;
      let got = pieces.get(id);
      if (!got) {
        if (pieces.size > 100) pieces.delete(pieces.keys().next().value);
        got = new Array(count);
        pieces.set(id, got);
      }
      got[Number(pre.dataset.part) || 0] = pre.textContent;
      if (got.filter((p) => p !== undefined).length < count) continue;
      pieces.delete(id);
      let payload;
      try { payload = JSON.parse(got.join("")); } catch (e) { continue; }
      const app = apps.get(payload.instance);
      if (app) app.onReply(payload);
    }
  }
  new MutationObserver(takeInbox).observe(inbox, { childList: true });

  // Results come and go: an app's place appears (open it), or is replaced (tear it down).
  function scan() {
    for (const el of document.querySelectorAll("[data-app-call]:not([data-app-instance])")) {
      const app = new App(el);
      apps.set(app.id, app);
    }
    for (const app of [...apps.values()]) {
      if (!app.el.isConnected) app.teardown("its Result was replaced");
    }
  }
  let scheduled = false;
  new MutationObserver(() => {
    if (scheduled) return;
    scheduled = true;
    setTimeout(() => { scheduled = false; scan(); }, 0);
  }).observe(document.getElementById("result")?.parentElement || document.body, { childList: true, subtree: true });
  // A new call from the tool's form replaces the Result: the app is asked to tear down first.
  document.addEventListener("submit", (e) => {
    if (e.target && e.target.id === "tool-form") for (const app of apps.values()) if (app.frame) app.request("ui/resource-teardown", {});
  }, true);
  scan();
})();
