// The server form: only the fields of the chosen transport, and only the chosen choice's line
// of help (Transport, Era). Without this script every field and line shows, and saving works
// the same: the server validates per transport.
(function () {
  "use strict";
  function sync(form) {
    const transport = form.querySelector("select[name=transport]");
    if (transport) {
      form.querySelectorAll("[data-transports]").forEach((group) => {
        group.hidden = !group.dataset.transports.split(" ").includes(transport.value);
      });
    }
    form.querySelectorAll("[data-choice-help]").forEach((help) => {
      const select = document.getElementById(help.dataset.choiceHelp);
      if (!select) return;
      help.querySelectorAll("[data-choice]").forEach((line) => { line.hidden = line.dataset.choice !== select.value; });
    });
  }
  function start() {
    document.querySelectorAll("form.server-form").forEach((form) => {
      form.addEventListener("change", (e) => { if (e.target.matches("select")) sync(form); });
      sync(form);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
