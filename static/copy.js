/* Copy buttons, one delegated handler for every page.
 *
 * Markup: <button type="button" data-copy="#some-id">Copy</button> copies the text of the
 * element the selector names (a <textarea>/<input> gives its value); data-copy-text="..."
 * copies that literal text instead; data-copy="closest:.line" looks up from the button.
 * A source element with data-copy-more="id" has the rest of its text in that element (a long
 * text sent in pieces): it is copied too.
 * data-copy-fetch="12" copies what the server answers for it: GET <base>12/, the base being the
 * data-copy-base of an enclosing element, whose data-copy-option may name a checkbox: when it
 * is ticked, its name=value goes in the query (Copy as curl: "include secrets").
 * The button keeps its accessible name "Copy"; success is shown by a class and a status
 * message for screen readers, so tests and people can tell it worked.
 */
(function () {
  "use strict";

  function source(button) {
    if (button.hasAttribute("data-copy-text")) return button.getAttribute("data-copy-text");
    var sel = button.getAttribute("data-copy") || "";
    var el = null;
    if (sel.indexOf("closest:") === 0) {
      var parts = sel.slice(8).split(" ");
      el = button.closest(parts[0]);
      if (el && parts.length > 1) el = el.querySelector(parts.slice(1).join(" "));
    } else if (sel) {
      el = document.querySelector(sel);
    }
    if (!el) return null;
    if ("value" in el && (el.tagName === "TEXTAREA" || el.tagName === "INPUT")) return el.value;
    if (el.getAttribute("data-copy-value") !== null) return el.getAttribute("data-copy-value");
    var rest = el.hasAttribute("data-copy-more") ? document.getElementById(el.getAttribute("data-copy-more")) : null;
    return el.textContent + (rest ? rest.textContent : "");
  }

  function fallback(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "copy-scratch";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    area.remove();
    return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  function announce(button, ok) {
    button.classList.remove("copied", "copy-failed");
    button.classList.add(ok ? "copied" : "copy-failed");
    button.setAttribute("title", ok ? "Copied" : "Copy failed: select the text by hand");
    var live = document.getElementById("copy-status");
    if (live) live.textContent = ok ? "Copied to the clipboard" : "Copy failed";
    window.setTimeout(function () { button.classList.remove("copied", "copy-failed"); }, 1500);
  }

  function fetched(button) {
    var holder = button.closest("[data-copy-base]");
    if (!holder) return null;
    var url = holder.getAttribute("data-copy-base") + encodeURIComponent(button.getAttribute("data-copy-fetch")) + "/";
    var option = holder.getAttribute("data-copy-option");
    var box = option ? document.querySelector(option) : null;
    if (box && box.checked) url += "?" + encodeURIComponent(box.name) + "=" + encodeURIComponent(box.value);
    return fetch(url, { credentials: "same-origin", headers: { Accept: "text/plain" } }).then(function (response) {
      if (!response.ok) throw new Error("HTTP " + response.status);
      return response.text();
    });
  }

  function write(text) {
    return navigator.clipboard && window.isSecureContext
      ? navigator.clipboard.writeText(text).catch(function () { return fallback(text); })
      : fallback(text);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest &&
      event.target.closest("button[data-copy], button[data-copy-text], button[data-copy-fetch]");
    if (!button) return;
    event.preventDefault();
    event.stopPropagation();
    var attempt;
    if (button.hasAttribute("data-copy-fetch")) {
      attempt = fetched(button);
      if (attempt) attempt = attempt.then(write);
    } else {
      var text = source(button);
      attempt = text === null ? null : write(text);
    }
    if (!attempt) { announce(button, false); return; }
    attempt.then(function () { announce(button, true); }, function () { announce(button, false); });
  });
})();
