// The session page's workspace, the middle column's top: the thing being worked on.
// - It follows the last click: a tool's, prompt's or template's form, a resource (read as it
//   opens), the raw composer; the catalogue marks that item (aria-current), and the Result of
//   another item is cleared.
// - A tool's arguments in two editors, Form and JSON, the values kept both ways: the form for
//   JSON values is rendered by the server (the same renderer as the first form), and the switch
//   happens only if the form holds exactly those values; JSON that does not parse stays, with
//   the error shown.
// - The values typed into a form come back when its item is opened again in this session
//   (sessionStorage, per session and item).
// - Keyboard: Ctrl/Cmd+Enter sends from any form here (and answers a server request); a field
//   with completion is an ARIA combobox (arrows move, Enter picks, Escape closes); opening an
//   item moves the focus to its first field.
(function () {
  "use strict";

  const PLACEHOLDER = '<p class="dim">Results appear here.</p>';
  const COMPLETE_DELAY_MS = 250;

  function live() { return document.getElementById("live"); }
  function workspace() { return document.getElementById("workspace"); }
  function sessionId() { const l = live(); return l ? l.dataset.session : ""; }
  function csrf() {
    try { return JSON.parse(document.body.getAttribute("hx-headers:inherited") || "{}")["X-CSRFToken"] || ""; }
    catch (err) { return ""; }
  }
  function visible(el) { return !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length); }

  // --- remembered values (sessionStorage: this tab, this session) ---------------------------
  function storeKey(item) { return "playground.values." + sessionId() + "." + item; }
  function save(item, entry) {
    try { sessionStorage.setItem(storeKey(item), JSON.stringify(entry)); } catch (err) { /* full or refused */ }
  }
  function load(item) {
    try { return JSON.parse(sessionStorage.getItem(storeKey(item)) || "null"); } catch (err) { return null; }
  }

  // --- the tool form: Form ⇄ JSON, the params preview ------------------------------------------
  function toolForm() { return document.getElementById("tool-form"); }
  function fields(form) { return form.querySelector("[data-form-fields]"); }
  function jsonBox(form) { return form.querySelector("[name=arguments_json]"); }
  function inJson(form) { return !!form.querySelector("[data-mode][value=json]:checked"); }
  function collect(form) {
    return window.schemaForms ? window.schemaForms.collect(fields(form)) : {};
  }
  function collectArgs(form) {
    if (inJson(form)) {
      try { return JSON.parse(jsonBox(form).value || "{}"); }
      catch (err) { return { "(invalid JSON)": String(err.message) }; }
    }
    return collect(form);
  }
  function preview(form) {
    const out = document.querySelector("[data-params-preview]");
    if (out) out.textContent = JSON.stringify({ name: form.dataset.tool, arguments: collectArgs(form) }, null, 2);
  }
  function rememberTool(form) {
    save("tool:" + form.dataset.tool, inJson(form) ? { mode: "json", text: jsonBox(form).value }
      : { mode: "form", args: collect(form) });
  }
  function showMode(form, mode) {
    form.querySelectorAll("[data-mode]").forEach((r) => { r.checked = r.value === mode; });
    fields(form).hidden = mode === "json";
    form.querySelector("[data-json-fields]").hidden = mode !== "json";
    fields(form).querySelectorAll("input, select, textarea").forEach((i) => { i.disabled = mode === "json"; });
  }
  function jsonError(form, text) {
    const box = form.querySelector("[data-json-error]");
    if (!box) return;
    box.replaceChildren();
    if (text) {
      const p = document.createElement("p");
      p.className = "form-errors";
      p.setAttribute("role", "alert");
      p.textContent = text;
      box.appendChild(p);
    }
  }
  // The server renders the fields for `values` ({ok, html} or {ok: false, error}).
  async function renderFields(form, values) {
    const body = new URLSearchParams({ name: form.dataset.tool, arguments: JSON.stringify(values) });
    try {
      const response = await fetch(form.dataset.fieldsUrl, {
        method: "POST", body, credentials: "same-origin", headers: { "X-CSRFToken": csrf() } });
      const text = await response.text();
      return response.ok ? { ok: true, html: text } : { ok: false, error: text || "HTTP " + response.status };
    } catch (err) {
      return { ok: false, error: "the form could not be rendered: " + err.message };
    }
  }
  // Where two JSON values differ, as JSON Pointers (a few).
  function differences(a, b, path, out) {
    out = out || [];
    if (out.length >= 5) return out;
    const obj = (v) => v !== null && typeof v === "object";
    if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      a.forEach((v, i) => differences(v, b[i], path + "/" + i, out));
    } else if (obj(a) && obj(b) && !Array.isArray(a) && !Array.isArray(b)) {
      new Set([...Object.keys(a), ...Object.keys(b)]).forEach((k) => {
        const seg = k.replace(/~/g, "~0").replace(/\//g, "~1");
        if (!(k in a) || !(k in b)) { if (out.length < 5) out.push(path + "/" + seg); }
        else differences(a[k], b[k], path + "/" + seg, out);
      });
    } else if (a !== b) {
      out.push(path || "/");
    }
    return out;
  }
  async function switchMode(form, mode) {
    if (mode === "json") {
      if (!form.querySelector("[data-json-fields]").hidden) return;     // the editor is already there
      const read = window.schemaForms ? window.schemaForms.collectDetailed(fields(form)) : { arguments: {}, errors: [] };
      if (read.errors.length) {          // a field the JSON could not carry as typed
        showMode(form, "form");
        jsonError(form, "Not switched: " + read.errors.join("; ") + ". Fix it to go to JSON; the form is kept.");
        return;
      }
      jsonBox(form).value = JSON.stringify(read.arguments, null, 2);
      jsonError(form, "");
      showMode(form, "json");
    } else {
      // The JSON editor stays until the form is known to hold its values.
      const refuse = (why) => { showMode(form, "json"); jsonError(form, "Not switched: " + why); };
      let value;
      try { value = JSON.parse(jsonBox(form).value.trim() || "{}"); }
      catch (err) {
        refuse("this JSON does not parse (" + err.message + "). Fix it to go back to the form; your text is kept.");
        return;
      }
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        refuse("the arguments must be a JSON object.");
        return;
      }
      const got = await renderFields(form, value);
      if (!got.ok) { refuse(got.error); return; }
      const holder = document.createElement("div");
      holder.innerHTML = got.html;
      const lost = differences(value, window.schemaForms.collect(holder), "");
      if (lost.length) {
        refuse("the form cannot hold " + lost.join(", ") +
          " as written (switching would change or drop them). Keep editing in JSON, or change them first.");
        return;
      }
      if (inJson(form)) return;          // the person went back to JSON meanwhile
      fields(form).replaceChildren(...holder.childNodes);
      jsonError(form, "");
      showMode(form, "form");
    }
    rememberTool(form);
    preview(form);
  }
  async function openTool(form) {
    // A form the server filled (Edit and resend: data-prefilled) shows those values, not the remembered ones.
    const saved = form.hasAttribute("data-prefilled") ? null : load("tool:" + form.dataset.tool);
    if (form.hasAttribute("data-prefilled")) rememberTool(form);
    if (saved && saved.mode === "json" && typeof saved.text === "string") {
      jsonBox(form).value = saved.text;
      showMode(form, "json");
    } else if (saved && saved.args && typeof saved.args === "object") {
      // What the person does meanwhile wins over what is restored: a field they went into is
      // not swapped from under them (the text typed next would land in its replacement, after
      // the restored value).
      let touched = false;
      const touch = () => { if (!quietFocus) touched = true; };
      form.addEventListener("input", touch);
      form.addEventListener("focusin", touch);
      form.setAttribute("aria-busy", "true");
      const got = await renderFields(form, saved.args);
      form.removeEventListener("input", touch);
      form.removeEventListener("focusin", touch);
      form.removeAttribute("aria-busy");
      if (got.ok && form.isConnected && !touched) fields(form).innerHTML = got.html;
    }
    if (!form.isConnected) return;
    preview(form);
    focusFirst(form.closest(".tool-form-wrap"));
  }

  // --- prompt and template forms: their fields by name -------------------------------------
  function plainFields(form) {
    return Array.from(form.querySelectorAll("input[name^='args.'], input[name^='vars.']"));
  }
  function rememberPlain(form) {
    const values = {};
    plainFields(form).forEach((i) => { if (i.value !== "") values[i.name] = i.value; });
    save(form.dataset.remember, { values });
  }
  function openPlain(form) {
    const saved = load(form.dataset.remember);
    if (saved && saved.values) plainFields(form).forEach((i) => { if (i.name in saved.values) i.value = saved.values[i.name]; });
  }

  // --- the workspace follows the last click ------------------------------------------------
  let shownItem = null;
  let quietFocus = false;          // a focus the page moved, not the person: asks no completion
  function currentItem() {
    const el = workspace() && workspace().querySelector("[data-item]");
    return el ? el.dataset.item : "";
  }
  function markCurrent() {
    const item = currentItem();
    document.querySelectorAll("#catalogue .item[data-item]").forEach((b) => {
      if (item && b.dataset.item === item) b.setAttribute("aria-current", "true");
      else b.removeAttribute("aria-current");
    });
  }
  function focusFirst(root) {
    if (!root) return;
    let target = null;
    const form = root.querySelector("form");
    if (form && form.id === "tool-form") {
      const scope = inJson(form) ? form.querySelector("[data-json-fields]") : fields(form);
      target = Array.from(scope.querySelectorAll("input:not([type=hidden]), select, textarea"))
        .find((el) => !el.disabled && visible(el));
    } else if (form) {
      target = Array.from(form.querySelectorAll("input:not([type=hidden]), select, textarea"))
        .find((el) => !el.disabled && visible(el));
    }
    target = target || root.querySelector("button.primary");
    if (!target) return;
    quietFocus = true;
    try { target.focus(); } finally { quietFocus = false; }
  }
  function readOnOpen(form) {
    const reader = document.getElementById("read-form");
    if (!reader) return;
    reader.querySelector("[name=uri]").value = form.querySelector("[name=uri]").value;
    reader.requestSubmit();
  }
  function workspaceChanged() {
    const item = currentItem();
    if (shownItem !== null && item !== shownItem) {
      const result = document.getElementById("result");
      if (result) { result.className = "result"; result.innerHTML = PLACEHOLDER; }
    }
    shownItem = item;
    markCurrent();
    const ws = workspace();
    const tool = toolForm();
    if (tool && ws.contains(tool)) { openTool(tool); return; }
    const plain = ws.querySelector("form[data-remember]");
    if (plain) openPlain(plain);
    const reading = ws.querySelector("form[data-read-on-open]");
    if (reading) readOnOpen(reading);
    focusFirst(ws.querySelector(".tool-form-wrap"));
  }
  function watchWorkspace() {
    const ws = workspace();
    if (ws && !ws._watched) {
      ws._watched = true;
      new MutationObserver(workspaceChanged).observe(ws, { childList: true });
      new MutationObserver((records) => {                          // suggestions came for a field
        for (const r of records) r.addedNodes.forEach((n) => {
          const input = n.nodeType === 1 && n.matches("[data-suggestions]") && document.getElementById(n.id.replace(/^sugg-/, ""));
          if (input) syncCombobox(input);
        });
      }).observe(ws, { childList: true, subtree: true });
    }
    const column = document.querySelector(".catalogue-col");        // a new catalogue (a refresh)
    if (column && !column._watched) {
      column._watched = true;
      new MutationObserver(markCurrent).observe(column, { childList: true });
    }
  }

  // Whatever opens in the workspace (a catalogue item, a result's resource link: `data-open`)
  // is one delegated click. A catalogue the websocket swaps in is clickable at once: with
  // hx-get on each button, a click before htmx had processed the new buttons did nothing.
  document.addEventListener("click", (event) => {
    const opener = event.target instanceof Element ? event.target.closest("[data-open]") : null;
    if (!opener || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    // From the workspace itself (hx-sync="this:replace"): a second click while the first item
    // loads replaces it, and nothing else's request (the Model view's) holds it up.
    htmx.ajax("GET", opener.dataset.open, { source: "#workspace", target: "#workspace", swap: "innerHTML" });
  });

  // --- completion as an ARIA combobox -------------------------------------------------------
  const timers = new WeakMap();
  const escaped = new WeakSet();         // closed (Escape, a pick): stays closed until the next keystroke
  function suggestionBox(input) { return document.getElementById("sugg-" + input.id); }
  function listbox(input) { const box = suggestionBox(input); return box ? box.querySelector("[role=listbox]") : null; }
  function options(input) { const list = listbox(input); return list ? Array.from(list.querySelectorAll("[role=option]")) : []; }
  function syncCombobox(input) {
    const box = suggestionBox(input);
    if (box && escaped.has(input) && box.firstChild) box.replaceChildren();
    const list = listbox(input);
    input.setAttribute("aria-expanded", String(!!list && options(input).length > 0));
    input.setAttribute("aria-controls", list ? list.id : "sugg-" + input.id);
    input.removeAttribute("aria-activedescendant");
  }
  function setActive(input, index) {
    const opts = options(input);
    opts.forEach((o, i) => { o.setAttribute("aria-selected", String(i === index)); o.classList.toggle("active", i === index); });
    const active = opts[index];
    if (active) { input.setAttribute("aria-activedescendant", active.id); active.scrollIntoView({ block: "nearest" }); }
  }
  function activeIndex(input) {
    const id = input.getAttribute("aria-activedescendant");
    return options(input).findIndex((o) => o.id === id);
  }
  function closeList(input) {
    const box = suggestionBox(input);
    if (box) box.replaceChildren();
    clearTimeout(timers.get(input));
    syncCombobox(input);
  }
  function pick(input, option) {
    input.value = option.dataset.suggest;
    quietFocus = true;                     // the pick is the answer, not a new question
    try { input.focus(); } finally { quietFocus = false; }
    escaped.add(input);                    // an answer still on its way does not reopen the list
    closeList(input);
    const form = input.closest("form[data-remember]");
    if (form) rememberPlain(form);
  }
  function scheduleCompletion(input) {
    clearTimeout(timers.get(input));
    timers.set(input, setTimeout(() => requestCompletion(input), COMPLETE_DELAY_MS));
  }
  function requestCompletion(input) {
    const form = document.getElementById("complete-form");
    if (!form || !input.isConnected || escaped.has(input)) return;
    const context = {};
    const owner = input.closest("form");
    if (owner) owner.querySelectorAll("[data-complete]").forEach((other) => {
      if (other !== input && other.value !== "") context[other.dataset.argument] = other.value;
    });
    const set = (n, v) => { form.querySelector(`[name=${n}]`).value = v; };
    set("ref_type", input.dataset.complete);
    set("ref", input.dataset.ref);
    set("argument", input.dataset.argument);
    set("value", input.value);
    set("context", JSON.stringify(context));
    set("target", "sugg-" + input.id);
    form.requestSubmit();
  }
  function comboboxKey(e, input) {
    const opts = options(input);
    const open = input.getAttribute("aria-expanded") === "true" && opts.length > 0;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (!open) { escaped.delete(input); requestCompletion(input); return; }
      const at = activeIndex(input);
      const step = e.key === "ArrowDown" ? 1 : -1;
      setActive(input, at < 0 ? (step > 0 ? 0 : opts.length - 1) : (at + step + opts.length) % opts.length);
    } else if (e.key === "Enter" && open && activeIndex(input) >= 0 && !(e.ctrlKey || e.metaKey)) {
      e.preventDefault();                  // picks; does not send the form
      pick(input, opts[activeIndex(input)]);
    } else if (e.key === "Escape" && (open || (suggestionBox(input) || {}).firstChild)) {
      e.preventDefault();
      escaped.add(input);
      closeList(input);
    }
  }

  // --- events -------------------------------------------------------------------------------
  document.addEventListener("keydown", (e) => {
    const el = e.target;
    if (!el || !el.closest) return;
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey) {
      const form = el.closest("#workspace form, #server-requests form");
      const button = form && form.querySelector("button.primary");
      if (button && !button.disabled) { e.preventDefault(); button.click(); }
      return;
    }
    if (el.matches("[role=combobox][data-complete]")) comboboxKey(e, el);
  });
  document.addEventListener("input", (e) => {
    const el = e.target;
    if (!el.closest) return;
    const tool = el.closest("#tool-form");
    if (tool) {
      if (tool.querySelector("[data-json-error] *")) {          // the switch's error: gone once fixed
        if (inJson(tool)) {
          try { JSON.parse(jsonBox(tool).value || "{}"); jsonError(tool, ""); } catch (err) { /* still broken */ }
        } else if (!window.schemaForms.collectDetailed(fields(tool)).errors.length) {
          jsonError(tool, "");
        }
      }
      rememberTool(tool);
      preview(tool);
    }
    const plain = el.closest("form[data-remember]:not(#tool-form)");
    if (plain) rememberPlain(plain);
    if (el.matches("[data-complete]")) { escaped.delete(el); scheduleCompletion(el); }
  });
  document.addEventListener("change", (e) => {
    const el = e.target;
    if (!el.closest) return;
    if (el.matches("[data-mode]")) { switchMode(el.closest("form"), el.value); return; }
    const tool = el.closest("#tool-form");
    if (tool) { rememberTool(tool); preview(tool); }
  });
  document.addEventListener("schemaforms:change", (e) => {
    const tool = e.target.closest && e.target.closest("#tool-form");
    if (tool) { rememberTool(tool); preview(tool); }
  });
  document.addEventListener("focusin", (e) => {
    if (!quietFocus && e.target.matches && e.target.matches("[data-complete]")) scheduleCompletion(e.target);
  });
  document.addEventListener("mousedown", (e) => {       // the field keeps the focus while one picks
    if (e.target.closest && e.target.closest("[data-suggest]")) e.preventDefault();
  });
  document.addEventListener("click", (e) => {
    const option = e.target.closest && e.target.closest("[data-suggest]");
    if (!option) return;
    const box = option.closest("[data-suggestions]");
    const input = box && document.getElementById(box.id.replace(/^sugg-/, ""));
    if (input) pick(input, option);
  });
  function start() { watchWorkspace(); markCurrent(); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
