// Acting from the page: the forms to add, edit and move a story (in dialogs), unblocking from
// the strip, and the keys that open them. A form is posted as the browser would post it, asking
// for JSON; the answer, or the refusal with its reason, is shown on the page. The board itself
// follows through the live refresh (app.js), as it follows any change.
(function () {
  "use strict";
  var message = document.getElementById("act-message");

  function dialogOpen() { return document.querySelector("dialog[open]"); }

  function open(dialog) {
    if (!dialog || dialog.open) { return; }
    var error = dialog.querySelector(".dialog-error");
    if (error) { error.hidden = true; error.textContent = ""; }
    dialog.showModal();
  }

  // What an action answered, above the board; a refusal stays until the next action.
  function say(text, refused, story) {
    if (!message) { return; }
    message.textContent = text;
    message.className = "act-message" + (refused ? " refusal" : "");
    if (story && !refused) {
      var link = document.createElement("a");
      link.href = "/story/" + encodeURIComponent(story.id);
      link.textContent = "open";
      message.append(" · ", link);
    }
    message.hidden = false;
  }

  // The words of a refusal that came as a page (a guard's, say) rather than as JSON.
  function wordsOf(response, text) {
    var type = response.headers.get("content-type") || "";
    if (type.indexOf("text/html") === 0) {
      var page = new DOMParser().parseFromString(text, "text/html");
      var pre = page.querySelector("pre");
      text = (pre || page.body).textContent;
    }
    return (text || "").trim() || ("refused: " + response.status);
  }

  function post(form, submitter) {
    var data = new FormData(form);
    if (submitter && submitter.name) { data.append(submitter.name, submitter.value); }
    var body = new URLSearchParams();
    data.forEach(function (value, key) { body.append(key, value); });
    return fetch(form.getAttribute("action"), {
      method: "POST",
      credentials: "same-origin",
      headers: { "Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded" },
      body: body.toString()
    }).then(function (response) {
      var json = (response.headers.get("content-type") || "").indexOf("application/json") === 0;
      return (json ? response.json() : response.text()).then(function (answer) {
        if (json) { return { ok: response.ok, message: answer.message, story: answer.story }; }
        return { ok: response.ok, message: wordsOf(response, answer) };
      });
    });
  }

  // Every form that acts on the board, wherever it is (the strip's live in the fragment).
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.hasAttribute || !form.hasAttribute("data-act")) { return; }
    event.preventDefault();
    var dialog = form.closest("dialog");
    var error = dialog && dialog.querySelector(".dialog-error");
    var buttons = form.querySelectorAll("button");
    for (var i = 0; i < buttons.length; i++) { buttons[i].disabled = true; }
    post(form, event.submitter)
      .catch(function (failure) { return { ok: false, message: "The server did not answer: " + failure }; })
      .then(function (answer) {
        for (var j = 0; j < buttons.length; j++) { buttons[j].disabled = false; }
        if (answer.ok) {
          if (dialog) { dialog.close(); }
          if (form.id === "add-form") { form.reset(); }
          say(answer.message, false, answer.story);
        } else if (error) {
          error.textContent = answer.message;
          error.hidden = false;
        } else {
          say(answer.message, true);
        }
      });
  });

  // A refusal shown in a form goes once the person changes what was refused.
  document.addEventListener("input", function (event) {
    var dialog = event.target.closest && event.target.closest("dialog");
    var error = dialog && dialog.querySelector(".dialog-error");
    if (error) { error.hidden = true; }
  });

  document.addEventListener("click", function (event) {
    var close = event.target.closest("[data-close]");
    if (close) { close.closest("dialog").close(); return; }
    var move = event.target.closest(".card-move");
    if (move) {
      var card = move.closest(".card");
      var column = card.closest("section[data-column]");
      openMove(move.getAttribute("data-move"), card.querySelector(".title").textContent,
        column ? column.getAttribute("data-column") : "");
    }
  });

  // The move form for one story: where it goes, and its own column not offered.
  function openMove(id, title, from) {
    var dialog = document.getElementById("move-dialog");
    if (!dialog) { return; }
    document.getElementById("move-form").setAttribute("action", "/story/" + encodeURIComponent(id) + "/move");
    document.getElementById("move-title").textContent = title;
    document.getElementById("move-from").textContent = from;
    var buttons = dialog.querySelectorAll("button[name=column]");
    for (var i = 0; i < buttons.length; i++) { buttons[i].disabled = buttons[i].value === from; }
    open(dialog);
  }

  function openAdd() {
    var dialog = document.getElementById("add-dialog");
    if (!dialog) { return; }
    open(dialog);
    document.getElementById("add-title").focus();
  }

  // The story as the page shows it now: the fragment is live, the form was made with the page.
  function story() { return document.getElementById("story-head"); }

  function openEdit() {
    var head = story();
    var dialog = document.getElementById("edit-dialog");
    if (!head || !dialog) { return; }
    document.getElementById("edit-title").value = head.getAttribute("data-title");
    document.getElementById("edit-priority").value = head.getAttribute("data-priority");
    document.getElementById("edit-labels").value = head.getAttribute("data-labels");
    open(dialog);
    document.getElementById("edit-title").focus();
  }

  function openStoryMove() {
    var head = story();
    if (head) {
      openMove(head.getAttribute("data-story"), head.getAttribute("data-title"), head.getAttribute("data-column"));
    }
  }

  var buttons = { "new-story": openAdd, "edit-story": openEdit, "move-story": openStoryMove };
  Object.keys(buttons).forEach(function (id) {
    var button = document.getElementById(id);
    if (button) { button.addEventListener("click", buttons[id]); }
  });

  // Keys: "/" searches, "n" opens the add form, "e" and "m" edit and move on a story's page,
  // Escape closes a form (the dialog does it) or leaves the search. Keys typed into a field
  // are the field's.
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) { return; }
    var field = event.target;
    var typing = field && (field.tagName === "INPUT" || field.tagName === "TEXTAREA" ||
      field.tagName === "SELECT" || field.isContentEditable);
    if (event.key === "Escape") {
      if (typing && !dialogOpen()) { event.preventDefault(); field.blur(); }
      if (message && !dialogOpen()) { message.hidden = true; }
      return;
    }
    if (typing || dialogOpen()) { return; }
    var search = document.getElementById("q");
    var act = {
      "/": search && function () { search.focus(); search.select(); },
      "n": document.getElementById("add-dialog") && openAdd,
      "e": document.getElementById("edit-dialog") && openEdit,
      "m": story() && openStoryMove
    }[event.key];
    if (act) { event.preventDefault(); act(); }
  });
})();
