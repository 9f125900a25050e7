// The chat page: Ctrl/Cmd+Enter sends the message; a sent message clears the box.
document.addEventListener("keydown", function (event) {
  if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) return;
  var box = event.target;
  if (!box || box.id !== "chat-message") return;
  event.preventDefault();
  box.form.requestSubmit();
});
document.addEventListener("submit", function (event) {
  if (event.target && event.target.id === "send-form") {
    var box = document.getElementById("chat-message");
    setTimeout(function () { box.value = ""; }, 0);  // after htmx has read the form
  }
});
