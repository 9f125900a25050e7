// Answers to a server's requests (elicitation, sampling) from the card that
// sessions/features/server_request.html renders, on the session page and in the chat alike:
// the answer is built as JSON and sent through the page's #answer-form (inside its websocket
// element). A URL is opened only on Accept, the person's click, and only an http(s) one.
(function () {
  "use strict";
  function sendAnswer(key, result, reject) {
    const form = document.getElementById("answer-form");
    if (!form) return;
    form.querySelector("[name=key]").value = key;
    form.querySelector("[name=result]").value = result ? JSON.stringify(result) : "";
    form.querySelector("[name=reject]").value = reject ? "1" : "";
    form.requestSubmit();
  }
  function answerElicitation(button) {
    const form = button.closest("form");
    const action = button.dataset.elicitAction;
    if (action === "accept" && form.hasAttribute("data-url")) {
      // URL mode: the person consented; open the URL (http(s) only) where the page cannot see it.
      const url = form.dataset.url;
      if (url) window.open(url, "_blank", "noopener,noreferrer");
      sendAnswer(form.dataset.key, { action: "accept" });
    } else if (action === "accept") {
      if (!form.reportValidity()) return;
      const content = window.schemaForms ? window.schemaForms.collect(form) : {};
      sendAnswer(form.dataset.key, { action: "accept", content });
    } else {
      sendAnswer(form.dataset.key, { action });
    }
  }
  function answerSampling(button) {
    const form = button.closest("form");
    if (button.dataset.samplingAction === "reject") { sendAnswer(form.dataset.key, null, true); return; }
    const v = (n) => form.querySelector(`[name=${n}]`).value;
    sendAnswer(form.dataset.key, { role: v("role"), content: { type: "text", text: v("text") }, model: v("model"), stopReason: v("stopReason") });
  }
  document.addEventListener("click", (e) => {
    const b = e.target.closest("button");
    if (!b) return;
    if (b.matches("[data-elicit-action]")) answerElicitation(b);
    if (b.matches("[data-sampling-action]")) answerSampling(b);
  });
})();
