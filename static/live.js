/* pi-session-export: a page served by `pi-session watch`. It asks the server every second
   which version of the page is current, and reloads when the session changed, keeping what
   the reader had: the place on the page (the end, for one who was there: the page follows
   the session as it grows), the open folds, the filter and the search, and the outline's
   scroll, drawer and unfolded branches. */
(function () {
  "use strict";
  var meta = document.querySelector("meta[name='pi-session-live']");
  // a copy saved from the browser and opened from disk has no watcher to ask
  if (!meta || !window.fetch || !window.sessionStorage || location.protocol !== "http:") return;
  var version = meta.getAttribute("content"), session = meta.getAttribute("data-session") || "";
  var STATE_KEY = "pi-session-export:live", EVERY = 1000, HIDDEN_EVERY = 4000, OFF_EVERY = 5000;
  var status = document.createElement("div");
  status.className = "live-status";
  status.setAttribute("role", "status");
  document.body.appendChild(status);
  if ("scrollRestoration" in history) history.scrollRestoration = "manual";

  function say(text, state) {
    if (status.textContent !== text) status.textContent = text;
    status.setAttribute("data-state", state);
  }
  // the end of the transcript is on screen (the page's scroll height is no guide: the
  // outline's column can reach further down than one can scroll)
  function atEnd() {
    var transcript = document.getElementById("transcript");
    return !!transcript && transcript.getBoundingClientRect().bottom <= window.innerHeight + 80;
  }
  // a fold is named by the closest element with an id around it (an entry, a branch), its
  // classes, and its place among that element's folds of the same classes: stable while
  // the session grows (the header's folds come and go with the counts: 20 branches, 10
  // labels, problems)
  function alike(owner, cls) {
    return Array.prototype.filter.call(owner.querySelectorAll("details"), function (d) {
      return d.className === cls;
    });
  }
  function foldKey(fold) {
    if (fold.id) return [fold.id, "", -1];
    var owner = fold.parentElement && fold.parentElement.closest("[id]");
    if (!owner) return null;
    return [owner.id, fold.className, alike(owner, fold.className).indexOf(fold)];
  }
  // the entry at the top of the window and how far down it starts: a place that survives
  // the reload (pixels do not: entries not yet in view are laid out at an estimated size)
  function topEntry() {
    var transcript = document.getElementById("transcript");
    if (!transcript) return null;
    var x = Math.max(transcript.getBoundingClientRect().left + 24, 0), y, hit, entry;
    for (y = 8; y < window.innerHeight / 2; y += 40) {  // past a gap between entries
      hit = document.elementFromPoint(x, y);
      entry = hit && hit.closest("[data-entry-id]");
      if (entry && entry.id) return [entry.id, entry.getBoundingClientRect().top];
    }
    return null;
  }
  // the outline's own state: its scroll, the narrow screen's drawer, the branches unfolded
  // in it (each named by its first row's link, stable while the session grows)
  function outlineFolds() {
    return Array.prototype.map.call(document.querySelectorAll("#sidebar input.ob-t"), function (box) {
      var sub = box.closest("li.sub"), link = sub && sub.querySelector("ul a[href]");
      return [box, link ? link.getAttribute("href") : null];
    });
  }
  function outlineState() {
    var side = document.getElementById("sidebar"), drawer = document.getElementById("outline-open");
    return {
      y: side ? side.scrollTop : 0, drawer: !!(drawer && drawer.checked),
      open: outlineFolds().filter(function (f) { return f[0].checked && f[1]; }).map(function (f) { return f[1]; })
    };
  }
  function restoreOutline(outline) {
    if (!outline) return;
    var drawer = document.getElementById("outline-open"), side = document.getElementById("sidebar");
    function set(box, on) {
      if (box.checked === on) return;
      box.checked = on;
      box.dispatchEvent(new Event("change", { bubbles: true }));
    }
    if (drawer && outline.drawer) set(drawer, true);
    outlineFolds().forEach(function (f) { if (f[1] && outline.open.indexOf(f[1]) >= 0) set(f[0], true); });
    if (side && outline.y) {  // again once the page has laid out (and scrolled the outline to its row)
      side.scrollTop = outline.y;
      setTimeout(function () { side.scrollTop = outline.y; }, 150);
    }
  }
  function entryIds() {
    return Array.prototype.map.call(document.querySelectorAll("#transcript [data-entry-id]"), function (entry) {
      return entry.getAttribute("data-entry-id");
    });
  }
  // the toolbar's "unfold every thinking block / tool output" buttons left pressed
  var TOGGLES = ["toggle-thinking", "toggle-tools"];
  function pressed() {
    return TOGGLES.filter(function (id) {
      var button = document.getElementById(id);
      return !!button && button.getAttribute("aria-pressed") === "true";
    });
  }
  function save() {
    var open = [], filter = document.querySelector("input.flt:checked");
    var search = document.getElementById("tree-search");
    var typing = search && document.activeElement === search;
    document.querySelectorAll("details[open]").forEach(function (fold) {
      var key = foldKey(fold);
      if (key) open.push(key);
    });
    var state = {
      session: session, at: Date.now(), y: window.scrollY, end: atEnd(), top: topEntry(), open: open,
      filter: filter ? filter.id : null, search: search ? search.value : "", seen: entryIds(),
      outline: outlineState(), pressed: pressed(),
      typing: typing ? [search.selectionStart, search.selectionEnd] : null
    };
    try {
      sessionStorage.setItem(STATE_KEY, JSON.stringify(state));
    } catch (e) {  // storage full (a huge session's ids): the place without the new-marks
      try {
        delete state.seen;
        sessionStorage.setItem(STATE_KEY, JSON.stringify(state));
      } catch (e2) { /* storage off: the reload starts at the top */ }
    }
  }
  function restore() {
    var state = null;
    try {
      state = JSON.parse(sessionStorage.getItem(STATE_KEY) || "null");
      sessionStorage.removeItem(STATE_KEY);
    } catch (e) { return; }
    if (!state || state.session !== session || Date.now() - state.at > 60000) return;
    (state.open || []).forEach(function (key) {
      var owner = document.getElementById(key[0]);
      if (!owner) return;
      var fold = key[2] < 0 ? owner : alike(owner, key[1])[key[2]];
      if (fold && fold.tagName === "DETAILS") fold.open = true;
    });
    var filter = state.filter && document.getElementById(state.filter);
    if (filter && filter.classList.contains("flt") && !filter.checked) {
      filter.checked = true;
      filter.dispatchEvent(new Event("change", { bubbles: true }));
    }
    var search = document.getElementById("tree-search");
    if (search && state.search) {
      search.value = state.search;
      search.dispatchEvent(new Event("input", { bubbles: true }));
    }
    if (search && state.typing) {  // the keys typed next go on into the search box
      search.focus({ preventScroll: true });
      try { search.setSelectionRange(state.typing[0], state.typing[1]); } catch (e) { /* ignore */ }
    }
    restorePressed(state.pressed || []);
    markNew(state.seen);
    restoreOutline(state.outline);
    place(state);
  }
  // the folds around an entry opened: the session forked above the reader (Pi's /tree, then
  // a prompt), and the branch they were reading is a closed fold of the new version
  function unfold(entry) {
    for (var fold = entry.closest("details:not([open])"); fold; fold = fold.closest("details:not([open])")) {
      fold.open = true;
    }
  }
  // again each frame until the page has kept its height for a while (entries near the end
  // take their real size, content-visibility, only once in view; a search runs after a
  // pause), unless the reader scrolls first
  function place(state) {
    var frames = 0, steady = 0, height = -1, top = state.top && document.getElementById(state.top[0]);
    var stop = false, events = ["wheel", "touchstart", "keydown", "mousedown"];
    function reader() { stop = true; }
    events.forEach(function (name) { window.addEventListener(name, reader, { once: true, passive: true }); });
    if (top && !state.end) unfold(top);
    function again() {
      if (stop) return;
      if (state.end) window.scrollTo(0, document.documentElement.scrollHeight);
      // an entry not shown (filtered out, searched away) has no place: the old scroll stays
      else if (top && top.getClientRects().length) {
        top.scrollIntoView();
        window.scrollBy(0, top.getBoundingClientRect().top - state.top[1]);
      } else window.scrollTo(0, state.y);
      var now = document.documentElement.scrollHeight;
      steady = now === height ? steady + 1 : 0;
      height = now;
      if (steady < 10 && ++frames < 90) requestAnimationFrame(again);
      else events.forEach(function (name) { window.removeEventListener(name, reader); });
    }
    again();
  }
  // a toggle pressed before stays pressed, its blocks (new ones too) unfolded: the folds
  // restored open with it unpressed, its next press folded everything. A press unfolds
  // all unless all are open already (then it folds them): a second one unfolds them again
  function restorePressed(ids) {
    ids.forEach(function (id) {
      var button = document.getElementById(id);
      if (!button || button.getAttribute("aria-pressed") === "true") return;
      button.click();
      if (button.getAttribute("aria-pressed") !== "true") button.click();
    });
  }
  // the entries the page did not have: what this reload brought (after a switch to an older
  // branch, the old last entry sits in a folded block far up, and all below it is not new)
  function markNew(seen) {
    if (!seen || !seen.length) return;
    var had = Object.create(null);
    seen.forEach(function (id) { had[id] = true; });
    document.querySelectorAll("#transcript [data-entry-id]").forEach(function (entry) {
      if (!had[entry.getAttribute("data-entry-id")]) entry.classList.add("live-new");
    });
  }
  function describe(answer) {
    // 24-hour, as every other time on the page (the locale's own said "5:22:49 AM")
    var d = new Date(answer.updated), when = [d.getHours(), d.getMinutes(), d.getSeconds()]
      .map(function (n) { return (n < 10 ? "0" : "") + n; }).join(":");
    return answer.problem ? answer.problem + " (showing the page of " + when + ")"
      : "Live: updated " + when;
  }
  function poll() {
    fetch("version", { cache: "no-store" }).then(function (response) {
      if (!response.ok) throw new Error(String(response.status));
      return response.json();
    }).then(function (answer) {
      var newer = String(answer.version) !== version, held = newer && holding();
      if (newer && !held) {
        // the place is kept by pagehide's save: a #fragment, a ?targetId= or ?leafId= (Pi's
        // links) would open again, at each reload, the folds around its entry that the
        // reader has closed since, and take the reader there
        var query = new URLSearchParams(location.search);
        query.delete("targetId");
        query.delete("leafId");
        var rest = query.toString(), search = rest ? "?" + rest : "";
        if (location.hash || search !== location.search) history.replaceState(null, "", location.pathname + search);
        location.reload();
        return;
      }
      say(held && !answer.problem ? "Live: a newer version waits " + held : describe(answer),
        answer.problem ? "problem" : "live");
      setTimeout(poll, document.hidden ? HIDDEN_EVERY : EVERY);
    }).catch(function () {
      say("Not connected: pi-session watch has stopped; this page no longer updates", "off");
      setTimeout(poll, OFF_EVERY);
    });
  }
  // no reload in the middle of a word, a selection or a click: one comes once the reader
  // has paused typing, let go of the pointer and selected nothing (a reload wiped the text
  // being selected to copy). Whether it waits: false, or what the status line says of the
  // wait (the newer version's time is not what the page shows yet). A press counts for at
  // most POINTER_HOLD: a pointerup the page never saw must not stop the updates
  var lastKey = 0, TYPING_PAUSE = 1500, pointerDown = 0, POINTER_HOLD = 10000;
  document.addEventListener("keydown", function () { lastKey = Date.now(); }, true);
  document.addEventListener("pointerdown", function () { pointerDown = Date.now(); }, true);
  ["pointerup", "pointercancel"].forEach(function (name) {
    document.addEventListener(name, function () { pointerDown = 0; }, true);
  });
  window.addEventListener("blur", function () { pointerDown = 0; });
  function holding() {
    if (Date.now() - lastKey <= TYPING_PAUSE) return "until typing pauses";
    if (pointerDown && Date.now() - pointerDown <= POINTER_HOLD) return "until the pointer is let go";
    var selection = window.getSelection && window.getSelection(), active = document.activeElement;
    var field = active && (active.tagName === "INPUT" || active.tagName === "TEXTAREA");
    if (selection && !selection.isCollapsed && selection.rangeCount && !field) return "until no text is selected";
    return false;
  }
  say("Live", "live");
  // the footer's "reloads itself", true only now (without this script a <noscript> says so)
  document.querySelectorAll(".live-note").forEach(function (note) { note.hidden = false; });
  restore();
  // a reload by hand (F5) keeps the place too: the browser's own restoring is off
  window.addEventListener("pagehide", save);
  poll();
})();
