// The board's live page: when the server says the board changed (server-sent events), fetch
// the page's fragment again and put it in place. The board page's search and filter are sent
// with every fetch, so the server filters and a refresh keeps the page filtered. No framework,
// no build step.
(function () {
  "use strict";
  var body = document.body;
  var view = document.getElementById("view");
  var live = document.getElementById("live");
  var filterForm = document.getElementById("filter");
  var target = body.getAttribute("data-fragment");
  var version = body.getAttribute("data-version");
  // The board render a board page shows; the server sends what changed since.
  var render = body.getAttribute("data-render");
  var busy = false;
  var again = false;

  // Timestamps are written in UTC by the server; show them in the reader's time zone.
  function localTimes(root) {
    var times = root.querySelectorAll("time[datetime]");
    for (var i = 0; i < times.length; i++) {
      var at = new Date(times[i].getAttribute("datetime"));
      if (!isNaN(at.getTime())) {
        times[i].textContent = at.toLocaleString();
        times[i].title = times[i].getAttribute("datetime");
      }
    }
  }

  // Someone writing a decision keeps their text and focus: the fragment waits until they
  // leave the field.
  function typing() {
    var active = document.activeElement;
    return active && view.contains(active) &&
      (active.tagName === "TEXTAREA" || active.tagName === "INPUT");
  }

  // The search and filter as the address and every fetch carry them ("" when there is none).
  function filterQuery() {
    if (!filterForm) { return ""; }
    var parts = [];
    var fields = ["q", "label", "column"];
    for (var i = 0; i < fields.length; i++) {
      var field = filterForm.elements[fields[i]];
      var value = field ? field.value.trim() : "";
      if (value) { parts.push(fields[i] + "=" + encodeURIComponent(value)); }
    }
    return parts.join("&");
  }
  // The filter the page shows; a fetch made for another is thrown away.
  var shownFilter = filterQuery();

  function place(html) {
    var open = {};
    var details = view.querySelectorAll("details[id]");
    for (var i = 0; i < details.length; i++) { open[details[i].id] = details[i].open; }
    var kept = {};
    var fields = view.querySelectorAll("textarea[id]");
    for (var j = 0; j < fields.length; j++) { kept[fields[j].id] = fields[j].value; }
    var holder = view.querySelector("#story") || view;
    holder.innerHTML = html;
    for (var id in open) {
      var d = document.getElementById(id);
      if (d) { d.open = open[id]; }
    }
    for (var key in kept) {
      var f = document.getElementById(key);
      if (f) { f.value = kept[key]; }
    }
    localTimes(holder);
  }

  function cardOf(id) { return document.getElementById("card-" + id); }
  function columnOf(name) { return view.querySelector("section[data-column=\"" + name + "\"]"); }

  // Only the cards that changed are touched: on a large board, placing every card again
  // would keep the browser busy for seconds.
  function apply(patch) {
    for (var i = 0; i < patch.removed.length; i++) {
      var gone = cardOf(patch.removed[i]);
      if (gone) { gone.remove(); }
    }
    var template = document.createElement("template");
    for (var j = 0; j < patch.changed.length; j++) {
      var change = patch.changed[j];
      var old = cardOf(change.id);
      if (old) { old.remove(); }
      template.innerHTML = change.html;
      var card = template.content.firstElementChild;
      var after = change.after && cardOf(change.after);
      if (after) {
        after.after(card);
      } else if (!change.after) {
        columnOf(change.column).querySelector("h2").after(card);
      }
      // Else the card it follows is folded away, and so is it: what the page shows stays the
      // head of the column.
      if (card.isConnected) { localTimes(card); }
    }
    for (var k = 0; k < patch.counts.length; k++) {
      var counted = patch.counts[k];
      var section = columnOf(counted.column);
      section.querySelector(".count").textContent = counted.text;
      holdBack(section, counted.listed - section.querySelectorAll("article.card").length);
    }
    var status = document.getElementById("status-piece");
    status.innerHTML = patch.status;
    document.getElementById("broken").innerHTML = patch.broken;
    localTimes(status);
    paintWork();
    tick();
  }

  // The button at the end of a folded column, saying how many cards it holds back.
  function holdBack(section, left) {
    var button = section.querySelector("button.more");
    if (left <= 0) { if (button) { button.remove(); } return; }
    if (!button) {
      button = document.createElement("button");
      button.type = "button";
      button.className = "more";
      button.setAttribute("data-column", section.getAttribute("data-column"));
      section.append(button);
    }
    button.textContent = left + " more";
  }

  // How many cards the page shows of each column, so that a page sent the whole board again
  // keeps what it unfolded.
  function shownQuery() {
    var counts = [];
    var sections = view.querySelectorAll("section[data-column]");
    for (var i = 0; i < sections.length; i++) {
      counts.push(sections[i].querySelectorAll("article.card").length);
    }
    return counts.length ? "show=" + counts.join(",") : "";
  }

  // The next cards of a folded column, after the last one shown (filtered as the page is).
  function unfold(button) {
    var section = button.closest("section[data-column]");
    var column = section.getAttribute("data-column");
    var cards = section.querySelectorAll("article.card");
    var last = cards[cards.length - 1];
    if (!last) { refresh(true); return; }
    var asked = filterQuery();
    var url = "/fragment/column/" + encodeURIComponent(column) + "?after=" +
      encodeURIComponent(last.getAttribute("data-story")) + (asked ? "&" + asked : "");
    button.disabled = true;
    fetch(url, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        // The last card shown has moved on since: the whole board, as far as it is unfolded.
        if (!response.ok) { refresh(true); return null; }
        return response.json();
      })
      .then(function (more) {
        button.disabled = false;
        if (!more || asked !== filterQuery()) { return; }
        var template = document.createElement("template");
        template.innerHTML = more.cards;
        var added = Array.prototype.slice.call(template.content.children);
        for (var i = 0; i < added.length; i++) {
          var shown = cardOf(added[i].getAttribute("data-story"));
          if (shown) { shown.remove(); }
          var fold = section.querySelector("button.more");
          if (fold) { fold.before(added[i]); } else { section.append(added[i]); }
          localTimes(added[i]);
        }
        paintWork();
        tick();
        holdBack(section, more.left);
      })
      .catch(function () { button.disabled = false; });
  }
  view.addEventListener("click", function (event) {
    var more = event.target.closest && event.target.closest("button.more");
    if (more) { unfold(more); }
  });

  // Brings the page up to date: a patch of the render it shows, or (`whole`, or when the
  // server no longer remembers that render) the whole fragment.
  function refresh(whole) {
    if (busy || typing()) { again = true; return; }
    busy = true;
    var asked = filterQuery();
    // A patch is of the filtered board the page shows; for another filter, the whole board.
    whole = whole || asked !== shownFilter;
    var query = [];
    if (render && !whole) { query.push("since=" + render); }
    if (asked) { query.push(asked); }
    if (whole || !render) {
      var shown = shownQuery();
      if (shown) { query.push(shown); }
    }
    var url = query.length ? target + "?" + query.join("&") : target;
    fetch(url, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        if (response.status === 404) { return "<p class=\"notice\">This story is no longer on the board.</p>"; }
        if (!response.ok) { return null; }
        var json = (response.headers.get("content-type") || "").indexOf("application/json") === 0;
        return (json ? response.json() : response.text()).then(function (answer) {
          return { answer: answer, rendered: response.headers.get("x-board-render") };
        });
      })
      .then(function (got) {
        if (got === null) { return; }
        if (typeof got === "string") { place(got); return; }
        // The filter changed while this was on its way: ask again for the new one.
        if (asked !== filterQuery()) { again = true; return; }
        if (got.rendered) { render = got.rendered; }
        if (typeof got.answer === "string") { place(got.answer); paintWork(); tick(); } else { apply(got.answer); }
        shownFilter = asked;
      })
      .catch(function () { again = true; })
      .then(function () {
        busy = false;
        if (again) {
          again = false;
          setTimeout(refresh, 250);
        }
      });
  }

  // A search or filter: kept in the address (a reload or a link keeps it) and asked of the
  // server at once, a moment after the last key.
  if (filterForm) {
    var pause = null;
    var filterChanged = function () {
      clearTimeout(pause);
      pause = setTimeout(function () {
        var query = filterQuery();
        if (query === shownFilter) { return; }
        history.replaceState(null, "", query ? "/?" + query : "/");
        refresh(true);
      }, 150);
    };
    filterForm.addEventListener("input", filterChanged);
    filterForm.addEventListener("change", filterChanged);
    filterForm.addEventListener("submit", function (event) {
      event.preventDefault();
      filterChanged();
    });
  }

  // Live work: each running story's tokens and last tool call come as `work` events; the time
  // since its action began is counted here, every second.
  var work = {};
  function paintWork() {
    var lines = view.querySelectorAll("[data-work]");
    for (var i = 0; i < lines.length; i++) {
      var now = work[lines[i].getAttribute("data-work")];
      var tokens = lines[i].querySelector(".tokens");
      var tool = lines[i].querySelector(".tool");
      if (tokens) {
        tokens.textContent = now && now.requests ? " · " + now.tokens.toLocaleString() + " tokens" : "";
      }
      if (tool) {
        var seen = now && now.tool;
        tool.textContent = !seen ? "" : (seen.state === "asked" ? " · calling " : " · last: ") +
          seen.name + (seen.state === "failed" ? " (failed)" : "");
        tool.title = seen ? seen.arguments : "";
        tool.className = "tool" + (seen ? " " + seen.state : "");
      }
    }
  }
  function duration(ms) {
    var s = Math.max(0, Math.floor(ms / 1000));
    var h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60;
    var pad = function (n) { return (n < 10 ? "0" : "") + n; };
    if (h) { return h + "h " + pad(m) + "m"; }
    return m ? m + "m " + pad(s % 60) + "s" : s + "s";
  }
  function tick() {
    var spans = view.querySelectorAll(".elapsed[data-since]");
    for (var i = 0; i < spans.length; i++) {
      var since = Date.parse(spans[i].getAttribute("data-since"));
      if (!isNaN(since)) {
        spans[i].textContent = "for " + duration(Date.now() - since);
        spans[i].title = "since " + new Date(since).toLocaleString();
      }
    }
  }
  setInterval(tick, 1000);
  tick();

  // A story's page follows its transcripts as they are written: each new line of a file is
  // added to that transcript (a new one gets its own fold), once; a line that would leave a
  // gap means the page missed some, and it asks for the story again.
  function transcriptOf(line) {
    var pres = view.querySelectorAll("pre[data-file]");
    for (var i = 0; i < pres.length; i++) {
      if (pres[i].getAttribute("data-file") === line.file) { return pres[i]; }
    }
    var section = document.getElementById("transcripts");
    if (!section) { return null; }
    var none = section.querySelector(".no-transcripts");
    if (none) { none.remove(); }
    var details = document.createElement("details");
    details.open = true;
    details.id = "transcript-live-" + line.file;
    var summary = document.createElement("summary");
    summary.textContent = line.heading;
    var pre = document.createElement("pre");
    pre.setAttribute("data-file", line.file);
    pre.setAttribute("data-end", "0");
    details.append(summary, pre);
    section.append(details);
    return pre;
  }
  function addLine(line) {
    var pre = transcriptOf(line);
    if (!pre) { return; }
    var end = Number(pre.getAttribute("data-end"));
    if (line.end <= end) { return; }
    if (line.start !== end) { refresh(true); return; }
    pre.append(document.createTextNode(line.lines.map(function (l) { return l + "\n"; }).join("")));
    pre.setAttribute("data-end", String(line.end));
  }
  function followTranscripts() {
    var head = document.getElementById("story-head");
    if (!head || !window.EventSource) { return; }
    var pres = view.querySelectorAll("pre[data-file]");
    var newest = pres[pres.length - 1];
    var from = newest ? "?from=" + encodeURIComponent(
      newest.getAttribute("data-file") + ":" + newest.getAttribute("data-end")) : "";
    var tail = new EventSource("/events/story/" + encodeURIComponent(head.getAttribute("data-story")) + from);
    tail.addEventListener("lines", function (event) { JSON.parse(event.data).forEach(addLine); });
  }
  followTranscripts();

  view.addEventListener("focusout", function () { if (again) { again = false; refresh(); } });
  localTimes(document);

  if (!window.EventSource) { setInterval(refresh, 2000); return; }
  var events = new EventSource("/events");
  events.addEventListener("change", function (event) {
    if (event.data !== version) { version = event.data; refresh(); }
  });
  events.addEventListener("work", function (event) {
    work = {};
    JSON.parse(event.data).forEach(function (now) { work[now.story] = now; });
    paintWork();
  });
  events.onopen = function () { live.className = "live on"; live.title = "live: updates as the board changes"; };
  events.onerror = function () { live.className = "live off"; live.title = "reconnecting…"; };
})();
