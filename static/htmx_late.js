// Controls that arrive in a swap (the websocket's fragments above all) are live from the first
// click. htmx attaches its handlers when it processes new content, a moment after the swap; on a
// busy machine a click can come first. Then a button's hx-post did nothing, and a form sending
// over the websocket (hx-ws:send) or by hx-post, with no action, was submitted by the browser
// itself: a GET of the page that reloaded it and lost what it sent. Such a click or submit is
// held here, the element processed, and the click or submit made again for htmx, once this
// event's dispatch is over (a form firing its submit event ignores requestSubmit).
(function () {
  "use strict";
  const VERBS = "[hx-get],[hx-post],[hx-put],[hx-patch],[hx-delete]";

  function late(el) {
    if (!el || el._htmx || !el.isConnected || typeof htmx === "undefined") return false;
    htmx.process(el);
    return !!el._htmx;
  }

  document.addEventListener("click", (event) => {
    const el = event.target instanceof Element ? event.target.closest(VERBS) : null;
    if (!el || el.matches("form") || !late(el)) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    setTimeout(() => el.click(), 0);
  }, true);

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !(form.hasAttribute("hx-ws:send") || form.matches(VERBS)) || !late(form)) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    const submitter = event.submitter || undefined;
    setTimeout(() => form.requestSubmit(submitter), 0);
  }, true);
})();
