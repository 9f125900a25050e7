/* schemaforms.js - the browser side of playground/schemaforms (plain JavaScript, no framework).
 *
 * - Array items: "Add item" clones the item <template>, "Remove" / "Move up" / "Move down" edit
 *   the list; after each change names and ids are renumbered so the server sees indices in order.
 * - oneOf/anyOf: the branch selector enables the chosen branch and disables (and hides) the others.
 * - Nullable fields: the "null" checkbox disables the value inputs.
 * - window.schemaForms.collect(formElement) builds the arguments object exactly as parse.py does
 *   on the server (keep both in step), for the live preview of the params that will be sent.
 * Everything works by event delegation on data-sf-* attributes, so HTML swapped in later by htmx
 * needs no setup. Structural changes fire a bubbling "schemaforms:change" event.
 */
(function () {
  "use strict";

  var MISSING = { missing: true };
  var PLACEHOLDER = "~i";
  var NUMBER_RE = /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/;
  var LOCAL_DATETIME_RE = /^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2})(:[0-9]{2}(\.[0-9]+)?)?$/;
  var SHORT_TIME_RE = /^[0-9]{2}:[0-9]{2}$/;
  var NAME_ATTRS = ["name", "data-sf-name"];
  var ID_ATTRS = ["id", "for", "aria-describedby", "aria-labelledby", "aria-controls", "data-sf-id"];

  function toArray(list) { return Array.prototype.slice.call(list); }

  /* The field wrapper ([data-sf-kind]) that encloses el, not counting el itself. */
  function ownerField(el) {
    var parent = el.parentElement;
    return parent ? parent.closest("[data-sf-kind]") : null;
  }

  /* Elements under wrapper w that belong to w itself, not to a nested field. */
  function own(w, selector) {
    return toArray(w.querySelectorAll(selector)).filter(function (el) {
      var owner = el.hasAttribute("data-sf-kind") ? ownerField(el) : el.closest("[data-sf-kind]");
      return owner === w;
    });
  }

  function changed(el) {
    el.dispatchEvent(new CustomEvent("schemaforms:change", { bubbles: true }));
  }

  /* ---- renaming ------------------------------------------------------------------------ */

  function replacePrefix(value, oldPrefix, newPrefix) {
    if (value === oldPrefix) return newPrefix;
    if (value.indexOf(oldPrefix + ".") === 0) return newPrefix + value.slice(oldPrefix.length);
    return null;
  }

  /* Rewrite name prefixes and id prefixes in root (element or fragment), templates included. */
  function rewrite(root, oldName, newName, oldId, newId) {
    var elements = toArray(root.querySelectorAll("*"));
    if (root.nodeType === 1) elements.unshift(root);
    elements.forEach(function (el) {
      NAME_ATTRS.forEach(function (attr) {
        var value = el.getAttribute(attr);
        if (value === null) return;
        var replaced = replacePrefix(value, oldName, newName);
        if (replaced !== null) el.setAttribute(attr, replaced);
      });
      ID_ATTRS.forEach(function (attr) {
        var value = el.getAttribute(attr);
        if (value === null) return;
        var out = value.split(/\s+/).map(function (token) {
          if (token.indexOf("id_") === 0) {
            var inner = replacePrefix(token.slice(3), oldId, newId);
            if (inner !== null) return "id_" + inner;
          }
          var plain = replacePrefix(token, oldId, newId);
          return plain !== null ? plain : token;
        }).join(" ");
        if (out !== value) el.setAttribute(attr, out);
      });
      if (el.tagName === "TEMPLATE") rewrite(el.content, oldName, newName, oldId, newId);
    });
  }

  function items(w) { return own(w, "[data-sf-item]"); }

  /* Give the items of array wrapper w the indices 0..n-1 in their current order. */
  function renumber(w) {
    var name = w.getAttribute("data-sf-name");
    var id = w.getAttribute("data-sf-id");
    items(w).forEach(function (item, i) {
      var old = item.getAttribute("data-sf-index");
      if (old !== String(i)) {
        rewrite(item, name + "." + old, name + "." + i, id + "." + old, id + "." + i);
        item.setAttribute("data-sf-index", String(i));
      }
      toArray(item.querySelectorAll("[data-sf-idx]")).forEach(function (el) {
        if (el.closest("[data-sf-item]") === item) el.textContent = String(i);
      });
    });
  }

  function addItem(w) {
    var template = own(w, "template[data-sf-template]")[0];
    var list = own(w, "[data-sf-items]")[0];
    if (!template || !list) return null;
    var index = String(items(w).length);
    var name = w.getAttribute("data-sf-name");
    var id = w.getAttribute("data-sf-id");
    var fragment = template.content.cloneNode(true);
    rewrite(fragment, name + "." + PLACEHOLDER, name + "." + index, id + "." + PLACEHOLDER, id + "." + index);
    var item = fragment.querySelector("[data-sf-item]");
    if (!item) return null;
    item.setAttribute("data-sf-index", index);
    list.appendChild(fragment);
    renumber(w);
    var first = item.querySelector("input:not([type=hidden]), select, textarea");
    if (first) first.focus();
    changed(w);
    return item;
  }

  function selectBranch(w, index) {
    own(w, "[data-sf-branch]").forEach(function (fieldset) {
      var on = fieldset.getAttribute("data-sf-branch") === String(index);
      fieldset.disabled = !on;
      fieldset.hidden = !on;
    });
    changed(w);
  }

  document.addEventListener("click", function (event) {
    var button = event.target && event.target.closest ? event.target.closest("[data-sf-action]") : null;
    if (!button || button.disabled) return;
    var action = button.getAttribute("data-sf-action");
    if (action === "add") {
      var array = button.closest("[data-sf-kind]");
      if (array) addItem(array);
      return;
    }
    var item = button.closest("[data-sf-item]");
    if (!item) return;
    var w = ownerField(item);
    if (!w) return;
    if (action === "remove") {
      item.parentNode.removeChild(item);
      renumber(w);
      var add = own(w, "[data-sf-action=add]")[0];
      if (add) add.focus();
    } else if (action === "up") {
      var prev = item.previousElementSibling;
      if (!prev || !prev.hasAttribute("data-sf-item")) return;
      item.parentNode.insertBefore(item, prev);
      renumber(w);
      button.focus();
    } else if (action === "down") {
      var next = item.nextElementSibling;
      if (!next || !next.hasAttribute("data-sf-item")) return;
      item.parentNode.insertBefore(next, item);
      renumber(w);
      button.focus();
    } else {
      return;
    }
    changed(w);
  });

  document.addEventListener("change", function (event) {
    var target = event.target;
    if (!target || !target.matches) return;
    if (target.matches("[data-sf-branch-select]")) {
      var choice = target.closest("[data-sf-kind]");
      if (choice) selectBranch(choice, target.value);
    } else if (target.matches("[data-sf-null]")) {
      var field = target.closest("[data-sf-kind]");
      if (!field) return;
      own(field, "[data-sf-value]").forEach(function (fieldset) { fieldset.disabled = target.checked; });
      changed(field);
    }
  });

  /* ---- collect: the arguments object, as parse.py builds it ----------------------------- */

  function parseNumber(text, integer) {
    text = text.trim();
    if (!NUMBER_RE.test(text)) throw new Error("not a number: " + JSON.stringify(text));
    var number = Number(text);
    if (!isFinite(number)) throw new Error("number out of range: " + JSON.stringify(text));
    if (integer && !Number.isInteger(number)) throw new Error("not an integer: " + JSON.stringify(text));
    return number;
  }

  function normalizeString(text, format) {
    if (format === "date-time") {
      var match = LOCAL_DATETIME_RE.exec(text);
      if (match) return match[1] + (match[2] || ":00") + "Z";
    } else if (format === "time" && SHORT_TIME_RE.test(text)) {
      return text + ":00";
    }
    return text;
  }

  function setKey(object, key, value) {
    Object.defineProperty(object, key, { value: value, enumerable: true, writable: true, configurable: true });
  }

  function control(w) { return own(w, "[data-sf-control]")[0] || null; }

  /* [value or MISSING, touched] for field wrapper w. */
  function fieldValue(w, errors) {
    var kind = w.getAttribute("data-sf-kind");
    var name = w.getAttribute("data-sf-name");
    var required = w.hasAttribute("data-sf-required");
    var c;
    if (w.hasAttribute("data-sf-nullable")) {
      var nullBox = own(w, "[data-sf-null]")[0];
      if (nullBox && nullBox.checked) return [null, true];
    }
    switch (kind) {
      case "string":
        c = control(w);
        if (!c) return [MISSING, false];
        if (c.value === "") return [required ? "" : MISSING, false];
        return [normalizeString(c.value, w.getAttribute("data-sf-format") || ""), true];
      case "number":
      case "integer":
        c = control(w);
        if (!c || c.value.trim() === "") return [MISSING, false];
        try {
          return [parseNumber(c.value, kind === "integer"), true];
        } catch (e) {
          errors.push(name + ": " + e.message);
          return [MISSING, false];
        }
      case "boolean":
        c = control(w);
        return c ? [c.checked, c.checked] : [MISSING, false];
      case "null":
        c = control(w);
        return c && c.checked ? [null, true] : [MISSING, false];
      case "const":
        return [JSON.parse(w.getAttribute("data-sf-const")), false];
      case "enum":
        c = control(w);
        if (!c || c.value === "" || c.selectedIndex < 0) return [MISSING, false];
        return [JSON.parse(c.options[c.selectedIndex].getAttribute("data-sf-json")), true];
      case "multiselect":
        var picked = own(w, "[data-sf-control]").filter(function (box) { return box.checked; });
        if (picked.length) {
          return [picked.map(function (box) { return JSON.parse(box.getAttribute("data-sf-json")); }), true];
        }
        return [required ? [] : MISSING, false];
      case "object":
        var out = {};
        var touched = false;
        own(w, "[data-sf-kind]").forEach(function (child) {
          var result = fieldValue(child, errors);
          if (result[0] !== MISSING) setKey(out, child.getAttribute("data-sf-key"), result[0]);
          touched = touched || result[1];
        });
        if (!touched && !required) return [MISSING, false];
        return [out, touched];
      case "array":
        var list = [];
        own(w, "[data-sf-kind]").forEach(function (item) {
          var result = fieldValue(item, errors);
          if (result[0] === MISSING) {
            errors.push(item.getAttribute("data-sf-name") + ": this item is empty");
          } else {
            list.push(result[0]);
          }
        });
        if (list.length) return [list, true];
        return [required ? [] : MISSING, false];
      case "choice":
        var select = own(w, "[data-sf-branch-select]")[0];
        var index = select ? select.value : "0";
        var branch = own(w, "[data-sf-branch]").filter(function (fieldset) {
          return fieldset.getAttribute("data-sf-branch") === index;
        })[0];
        if (!branch) return [MISSING, false];
        var inner = own(w, "[data-sf-kind]").filter(function (el) {
          return el.closest("[data-sf-branch]") === branch;
        })[0];
        return inner ? fieldValue(inner, errors) : [MISSING, false];
      case "json":
        c = control(w);
        if (!c || c.value.trim() === "") return [MISSING, false];
        try {
          return [JSON.parse(c.value), true];
        } catch (e) {
          errors.push(name + ": invalid JSON: " + e.message);
          return [MISSING, false];
        }
      default:
        errors.push(name + ": cannot read a " + JSON.stringify(kind) + " field");
        return [MISSING, false];
    }
  }

  function findRoot(element) {
    if (!element) return null;
    if (element.matches && element.matches("[data-sf-root]")) return element;
    return element.querySelector("[data-sf-root]");
  }

  /* {arguments, errors} from a form (or any element holding one rendered schema form). */
  function collectDetailed(element) {
    var errors = [];
    var root = findRoot(element);
    if (!root) return { arguments: {}, errors: errors };
    var value = fieldValue(root, errors)[0];
    if (value === MISSING) value = root.getAttribute("data-sf-kind") === "object" ? {} : null;
    return { arguments: value, errors: errors };
  }

  function collect(element) { return collectDetailed(element).arguments; }

  window.schemaForms = {
    collect: collect,
    collectDetailed: collectDetailed,
    addItem: addItem,
    renumber: renumber,
    selectBranch: selectBranch
  };
})();
