// The chat page: Ctrl/Cmd+Enter sends the message. The box is cleared once the chat has taken the
// message (its item appears in the conversation), and only if the box still holds what was sent:
// a send that was refused (a turn running) or never left (the socket closed) keeps its text, and
// so does text typed while the send was on its way.
(function () {
  var sent = null;  // the box's text when Send was pressed, until the chat takes it
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) return;
    var box = event.target;
    if (!box || box.id !== "chat-message") return;
    event.preventDefault();
    box.form.requestSubmit();
  });
  document.addEventListener("submit", function (event) {
    if (event.target && event.target.id === "send-form") {
      sent = document.getElementById("chat-message").value;
    }
  });
  function taken(node) {
    var box = document.getElementById("chat-message");
    if (sent === null || !box || !node.matches || !node.matches("#chat-log .chat-msg.user")) return;
    var text = node.querySelector(".text");
    if (!text || text.textContent !== sent.trim()) return;
    if (box.value === sent) box.value = "";
    sent = null;
  }
  new MutationObserver(function (records) {
    records.forEach(function (record) { record.addedNodes.forEach(taken); });
  }).observe(document.documentElement, { childList: true, subtree: true });
})();
