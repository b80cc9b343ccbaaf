/* pi-session-export: progressive enhancement only. The page is complete without this script;
   it adds local times, search, keyboard shortcuts, deep links, copy links and the JSONL
   download (the theme toggle is theme.js). No network access (the page's CSP forbids it anyway). */
(function () {
  "use strict";
  var doc = document;

  // Work put off until the page has loaded. A host that writes the page into its own
  // document (gisthost's document.write, never closed) leaves it "loading" for good: the
  // window's load event came before the page was written, and none comes after.
  function afterLoad(fn) {
    var perf = window.performance, nav = perf && perf.getEntriesByType && perf.getEntriesByType("navigation")[0];
    if (doc.readyState === "complete" || (nav && nav.loadEventEnd > 0)) fn();
    else window.addEventListener("load", function () { fn(); }, { once: true });
  }
  function $(sel, el) { return (el || doc).querySelector(sel); }
  function $all(sel, el) { return Array.prototype.slice.call((el || doc).querySelectorAll(sel)); }
  function show(el) { if (el) el.hidden = false; }
  function thousands(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }  // as the page writes them

  // Local times (the server wrote UTC). Formatted by hand: Intl costs ~50 ms at start-up.
  function pad(n) { return n < 10 ? "0" + n : "" + n; }
  function localTime(d) {
    var y = d.getFullYear();  // year 999 as 0999, as the server writes it
    return (y < 1e3 ? ("000" + y).slice(-4) : y) + "-" + pad(d.getMonth() + 1) + "-" +
      pad(d.getDate()) + " " + pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds());
  }
  function utcOffset(d) {  // in seconds: before ~1883 a zone is local mean time (−07:52:58)
    var s = Math.round(d.getTimezoneOffset() * -60), sign = s < 0 ? "−" : "+";
    if (!s) return "UTC";  // not "UTC+00:00"
    s = Math.abs(s);
    return "UTC" + sign + pad(Math.floor(s / 3600)) + ":" + pad(Math.floor(s / 60) % 60) +
      (s % 60 ? ":" + pad(s % 60) : "");
  }
  $all("time[datetime]").forEach(function (t) {
    var d = new Date(t.getAttribute("datetime"));
    if (isNaN(d)) return;
    t.title = t.getAttribute("datetime") + " (UTC)";
    // the header's start and end say which zone; entries follow it
    t.textContent = localTime(d) + (t.closest(".facts") ? " " + utcOffset(d) : "");
  });

  // Toggles for thinking and tool output (also keys t / o).
  function toggleAll(selector) {
    var items = $all(selector);
    var open = items.some(function (d) { return !d.open; });
    items.forEach(function (d) { d.open = open; });
    return open;
  }
  var toggles = { "toggle-thinking": "details.thinking", "toggle-tools": ".tool details.fold, details.skill, details.summary-block" };
  Object.keys(toggles).forEach(function (id) {
    var b = $("#" + id);
    if ($(toggles[id])) show(b);  // (a button that can do nothing stays hidden)
    b.setAttribute("aria-pressed", "false");  // pressed = everything of its kind unfolded
    b.addEventListener("click", function () { b.setAttribute("aria-pressed", String(toggleAll(toggles[id]))); });
    // one of them folded by hand: no longer "everything unfolded" (it stayed pressed); the
    // last one unfolded by hand: everything is (it said "false", and a press folded them all).
    // The open ones are kept in a set, from a look at them all at the first fold or unfold.
    var opened = null, total = 0;
    doc.addEventListener("toggle", function (ev) {
      var d = ev.target;
      if (!d.matches || !d.matches(toggles[id])) return;
      if (!opened) {
        var all = $all(toggles[id]);
        total = all.length; opened = new Set(all.filter(function (x) { return x.open; }));
      }
      if (!d.open) { opened.delete(d); b.setAttribute("aria-pressed", "false"); }
      else if (opened.add(d).size === total) b.setAttribute("aria-pressed", "true");
    }, true);
  });

  // Search: a row matches when every whitespace-separated term (AND) is in its outline text
  // or anywhere in its entry (message text, tool calls and results, thinking).
  show($(".keys"));  // the shortcuts exist only with this script
  var search = $("#tree-search"), status = $("#tree-status");
  var statusText = status ? ($(".st-default", status) || status).textContent : "";  // Default's line
  var allText = status && status.getAttribute("data-all") || statusText;  // nothing hidden under All
  var tree = $("#tree"), rows = $all("#tree li:not(.sub):not(.chunk)"), texts = [], owns = [];
  show(search);
  // What a search looks through: the session's own words, not the page's labels around
  // them (entry headers, usage footers, "N more lines", badges, another entry quoted in a
  // note): "context" matched 249 rows of pi-v1 through a header note alone; nor the
  // Copy buttons, a thinking block's "Thinking · N words", a compaction's summary heading
  // or another label of the page's own (.pl): "copy" matched 454 rows of pi-branched-4.
  var NOT_SEARCHED = ".entry > header, .entry > footer, details.fold > summary, .badge, p.same-output, .quoted, " +
    ".copy-btn, details.thinking > summary, details.summary-block > summary, .pl";
  function contentTexts(root) {
    return doc.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, { acceptNode: function (node) {
      if (node.nodeType === 3) return NodeFilter.FILTER_ACCEPT;
      return node.matches(NOT_SEARCHED) || node.hasAttribute("data-entry-id") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP;
    } });
  }
  // The same text as walking contentTexts(root), built from native textContent: cut the
  // few left-out parts out of it in document order (a filtered walk took 0.7 s on 10k).
  // An entry shown inside another (a tool's call and result, under the result's id) is
  // left out of the outer one too: it is its own row, and a word in a tool's output
  // counted twice, once more for the assistant turn around it.
  var leftOut = null;  // entry element -> its left-out parts, found in one query for all
  function entryAround(el) { return el.parentElement && el.parentElement.closest("[data-entry-id]"); }
  function leftOutOf(root) {
    if (!leftOut) {
      leftOut = new Map();
      var parts = NOT_SEARCHED.split(", ").concat("[data-entry-id] [data-entry-id]");
      $all("#transcript " + parts.join(", #transcript ")).forEach(function (el) {
        var entry = el.hasAttribute("data-entry-id") ? entryAround(el) : el.closest("[data-entry-id]");
        for (; entry; entry = entryAround(entry)) {
          if (!leftOut.has(entry)) leftOut.set(entry, []);
          leftOut.get(entry).push(el);
        }
      });
    }
    return leftOut.get(root) || [];
  }
  function contentText(root) {
    var text = root.textContent, parts = [], at = 0, last = null;
    var left = leftOutOf(root);
    for (var i = 0; i < left.length; i++) {
      if (last && last.contains(left[i])) continue;  // inside a part already cut
      var cut = left[i].textContent, found = cut ? text.indexOf(cut, at) : -1;
      if (found < 0) continue;
      parts.push(text.slice(at, found));
      at = found + cut.length; last = left[i];
    }
    parts.push(text.slice(at));
    return parts.join("");
  }
  // Case-folded for search: "İ" lowercases to "i" and a combining dot, which neither
  // "istanbul" nor a mark's offsets would find; it folds to "i". Composed (NFC), query and
  // text alike: "café" typed was not found in a macOS path stored decomposed ("e" and a
  // combining accent). (A mark's offsets are mapped back to the text node: termRanges.)
  function fold(text) { return text.normalize().toLowerCase().replace(/i\u0307/g, "i"); }
  // Words, and "quoted phrases" kept whole (their quotes are no part of the text)
  function searchTerms() {
    var terms = [];
    fold(search.value).replace(/"([^"]*)"?|[^\s"]+/g, function (word, phrase) {
      var term = phrase === undefined ? word : phrase.trim();
      if (term) terms.push(term);
    });
    return terms;
  }
  // The "same output as ..." links of each entry, found in one query for all: a scoped
  // querySelectorAll per row cost ~0.2 ms each on a 20,000-entry page (4 s per search).
  var sameOutput = null;
  function sameOutputOf(root) {
    if (!sameOutput) {
      sameOutput = new Map();
      $all("#transcript p.same-output a").forEach(function (link) {
        var entry = link.closest("[data-entry-id]");  // only its own: see leftOutOf
        if (!sameOutput.has(entry)) sameOutput.set(entry, []);
        sameOutput.get(entry).push(link);
      });
    }
    return sameOutput.get(root) || [];
  }
  // What a row's entry holds beyond the row's own words (folded for search)
  function insideText(row) {
    var a = $("a", row), el = a ? doc.getElementById(a.getAttribute("href").slice(1)) : null;
    var text = "\n" + (el ? contentText(el) : "");
    // an output shown once and linked from its repeats is found from each of them
    if (el) sameOutputOf(el).forEach(function (link) {
      var shown = doc.getElementById(link.getAttribute("href").slice(1));
      if (shown) text += "\n" + contentText(shown);
    });
    return fold(text);
  }
  // The row texts are read in short slices once the search box has focus, so the first
  // key does not wait for the whole page (~0.7 s on 10,000 entries); a search that comes
  // sooner reads the rest at once.
  function readRows(more) {
    while (texts.length < rows.length && more()) {
      var own = fold(rows[texts.length].textContent);
      owns.push(own.length);  // where the row's own words end: a match past it is "in text"
      texts.push(own + insideText(rows[texts.length]));
    }
  }
  search.addEventListener("focus", function readSome() {
    var until = performance.now() + 12;
    readRows(function () { return performance.now() < until; });
    if (texts.length < rows.length) setTimeout(readSome, 0);
  });
  // Whether the chosen filter shows a row: page.css's filter rules for outline rows, read
  // from classes (a computed style per row took 0.7 s for 9,000 matches).
  function filterShows(row, filter) {
    return filter === "flt-all" || row.classList.contains("br-" + filter.slice(4))  // a fork's row stays
      || filterMatches(row, filter);
  }
  // ... and whether the row is one the filter is for (not a fork kept for the shape)
  function filterMatches(row, filter) {
    var c = row.classList;
    if (filter === "flt-all") return true;
    if (c.contains("hide-default")) return false;
    if (filter === "flt-notools") return !c.contains("is-tool");
    if (filter === "flt-user") return c.contains("is-user");
    if (filter === "flt-labeled") return c.contains("is-labeled") || c.contains("in-labeled");
    return true;
  }
  // The row a row's branch leaves from: before the sub-lists that hold it, one level up
  // (none for a separate tree: it leaves from nothing).
  function forkAbove(row) {
    var sub = row.parentElement && row.parentElement.parentElement;
    if (!sub || !sub.classList.contains("sub") || sub.classList.contains("root")) return null;
    var fork = sub.previousElementSibling;
    while (fork && fork.classList.contains("sub")) fork = fork.previousElementSibling;
    return fork;
  }
  function runSearch() {
    var terms = searchTerms();
    if (terms.length) readRows(function () { return true; });  // a filter change alone needs no text
    var hits = [];
    for (var i = 0; i < rows.length; i++) {
      var hit = true, inside = false;
      for (var j = 0; j < terms.length && hit; j++) {
        var at = texts[i].indexOf(terms[j]);
        hit = at !== -1; inside = inside || at > owns[i];
      }
      rows[i].classList.toggle("search-miss", !hit);
      rows[i].classList.toggle("search-inside", hit && inside);  // not in the row's words
      if (hit) hits.push(rows[i]);
    }
    var chosen = $("input.flt:checked"), filter = chosen ? chosen.id : "flt-all";
    var seen = hits.filter(function (r) { return filterShows(r, filter); });
    // the fork rows a match's branch leaves from stay (muted), so no match hangs under
    // nothing; then each branch and separate tree is marked where its first shown row is
    $all("#tree li.search-context, #tree li.search-first, #tree li.search-empty").forEach(function (el) {
      el.classList.remove("search-context", "search-first", "search-empty");
    });
    tree.classList.toggle("searching", terms.length > 0);
    if (terms.length) {
      seen.forEach(function (row) {
        for (var fork = forkAbove(row); fork && fork.classList.contains("search-miss"); fork = forkAbove(fork)) {
          fork.classList.remove("search-miss"); fork.classList.add("search-context");
        }
      });
      $all("#tree li.sub").forEach(function (sub) {
        var first = $all(":scope > ul > li:not(.sub)", sub).filter(function (r) {
          return !r.classList.contains("search-miss") && filterShows(r, filter);
        })[0];
        if (first) first.classList.add("search-first");
        else if (sub.classList.contains("root")) sub.classList.add("search-empty");  // its caption goes
      });
    }
    // count what the reader sees: rows the active filter hides are not matches on screen
    // (by the row's classes, so a folded outline on a phone still counts its matches)
    // a filter the reader chose (not Default or All) is counted too: "21 of 212 shown"
    // fork rows a filter keeps for the tree's shape are not counted as its entries
    var narrowed = !/^flt-(default|all)$/.test(filter);
    var matching = seen.filter(function (r) { return filterMatches(r, filter); }).length;
    var kept = seen.length - matching;
    var forks = kept ? " · " + thousands(kept) + " fork point" + (kept === 1 ? "" : "s") + " kept" : "";
    // Labeled: a labelled turn's tool results are shown with it, not counted as labelled
    var along = filter !== "flt-labeled" ? 0 : seen.filter(function (r) {
      return filterMatches(r, filter) && !r.classList.contains("is-labeled");
    }).length;
    matching -= along;
    if (along) forks = " · " + thousands(along) + " tool result" + (along === 1 ? "" : "s") + " with them" + forks;
    // matches the filter hides are said, or "0 of 25 entries match" read as "not there"
    var hidden = hits.length - seen.length;
    var more = hidden ? " · " + thousands(hidden) + " more under All" : "";
    status.textContent = terms.length ? thousands(matching) + " of " + thousands(rows.length) + " entries match" + forks + more
      : narrowed ? thousands(matching) + " of " + thousands(rows.length) + " entries shown (" + $("label[for=" + chosen.id + "]").textContent + ")" + forks
      : chosen && chosen.id === "flt-all" ? allText : statusText;
    if (!terms.length) markedEntry = null;
    markedRows = hits;
    markTerms();
    clearTimeout(saying); saying = setTimeout(function () { spoken.textContent = status.textContent; }, 600);
  }
  var saying = 0;
  status.setAttribute("aria-live", "off");  // said by `spoken`, once typing pauses: 5 keys queued 5 counts

  // The terms are marked where the reader looks: in the matching outline rows, and in an
  // entry opened while searching (whose folds holding a match open). CSS highlights leave
  // the DOM alone; where a browser lacks them, nothing is marked.
  var canMark = !!(window.CSS && CSS.highlights && window.Highlight);
  var MAX_MARKS = 5000, markedRows = [], markedEntry = null;
  // A word split over several text nodes (a highlighted token's parts, a colour change
  // inside it) is read as the run of text it is on screen: the nodes of one block, joined.
  var INLINE = /^(SPAN|A|CODE|EM|STRONG|B|I|S|U|DEL|INS|SUB|SUP|KBD|SAMP|VAR|MARK|SMALL|Q|CITE|ABBR)$/;
  function blockOf(node) {
    var el = node.parentElement;
    while (el && INLINE.test(el.tagName)) el = el.parentElement;
    return el;
  }
  // A node that folding shortens or lengthens ("cafe" and a combining accent, an "İ") is
  // folded a letter and its marks at a time, each folded character mapped back to the
  // letter and marks it came from: a match then covers them whole in the node.
  function termRanges(walker, terms, into, limit) {
    var nodes = [], starts = [], maps = [], run = "", block = null, node;
    function place(k, o, a) { return maps[k] ? maps[k][o][a] : o + a; }
    function flush() {
      terms.forEach(function (term) {
        for (var at = run.indexOf(term), n = 0; at !== -1 && into.length < limit; at = run.indexOf(term, at + term.length)) {
          var end = at + term.length, range = new Range();
          while (starts[n + 1] <= at) n++;  // the node the match starts in
          var m = n;
          while (starts[m + 1] < end) m++;  // and the one it ends in (its last character)
          range.setStart(nodes[n], place(n, at - starts[n], 0)); range.setEnd(nodes[m], place(m, end - starts[m] - 1, 1));
          into.push(range);
        }
      });
      nodes = []; starts = []; maps = []; run = "";
    }
    while ((node = walker.nextNode()) && into.length < limit) {
      var text = fold(node.data), here = blockOf(node), map = null;
      if (here !== block) flush();
      block = here;
      if (text.length !== node.data.length) {
        if (text.length > 5e4) continue;  // (a letter at a time took 0.3 s a key in a 1 MB output: not searched, as before)
        text = ""; map = [];
        node.data.replace(/[^][\p{M}\u1160-\u11ff]*/gu, function (part, from) {  // Hangul's vowel and final jamo compose too
          for (var folded = fold(part), k = 0; k < folded.length; k++) map.push([from, from + part.length]);
          text += folded;
        });
      }
      nodes.push(node); starts.push(run.length); maps.push(map); run += text;
    }
    flush();
  }
  // Whether a term the row's words hold is shown only past the row's ellipsis (or under
  // its "in text" cue): the row then reads as a hit with nothing that matched.
  function clippedTerm(link, rowRanges) {
    var box = link.getBoundingClientRect(), seen = {}, shown = {};
    var cue = parseFloat(getComputedStyle(link).fontSize) * 4.5;  // page.css: .search-inside padding
    rowRanges.forEach(function (range) {
      var term = fold(range.toString()), right = range.getBoundingClientRect().right;
      seen[term] = true;
      if (right <= box.right - cue) shown[term] = true;
    });
    return Object.keys(seen).some(function (term) { return !shown[term]; });
  }
  function markTerms() {  // -> the first match in markedEntry, if any
    if (!canMark) return null;
    var terms = searchTerms(), ranges = [];
    if (terms.length && markedEntry) {  // first, so the rows cannot use up the marks
      termRanges(contentTexts(markedEntry), terms, ranges, MAX_MARKS / 5);
      ranges.slice(0, 20).forEach(function (range) {  // unfold what holds the first matches
        for (var p = range.startContainer.parentElement; p && p !== markedEntry; p = p.parentElement)
          if (p.tagName === "DETAILS" && !p.classList.contains("branch")) p.open = true;
      });
    }
    var first = ranges[0] || null, cut = [];
    for (var i = 0; terms.length && i < markedRows.length && ranges.length < MAX_MARKS; i++) {
      var link = $("a", markedRows[i]), from = ranges.length;
      if (!link || !markedRows[i].offsetParent) continue;
      termRanges(doc.createTreeWalker(link, NodeFilter.SHOW_TEXT), terms, ranges, MAX_MARKS);
      if (ranges.length > from && link.scrollWidth > link.clientWidth && clippedTerm(link, ranges.slice(from)))
        cut.push(markedRows[i]);
    }
    // written after all the reads, so the rows are laid out once
    cut.forEach(function (row) { row.classList.add("search-inside"); });
    var highlight = new Highlight();
    ranges.forEach(function (range) { highlight.add(range); });
    CSS.highlights.set("search-terms", highlight);
    return first;
  }
  var pending = 0;
  var outlineOpen = doc.getElementById("outline-open");  // folds the outline on narrow screens
  function openOutline() {  // a change in code fires no event: keep the toggle's state true
    outlineOpen.checked = true;
    outlineOpen.dispatchEvent(new Event("change"));
  }
  search.addEventListener("input", function () {
    if (outlineOpen && search.value && !outlineOpen.checked) openOutline();  // the matches are outline rows
    clearTimeout(pending); pending = setTimeout(runSearch, rows.length > 3000 ? 120 : 30);
  });
  // A new filter changes which matches are on screen: count again.
  $all("input.flt").forEach(function (radio) {
    radio.addEventListener("change", runSearch);  // also says how many rows the filter left
  });

  // Keyboard order: the no-script filters and outline toggle need their inputs first in
  // <body>, which put them before the search box. Here their visible labels take over as
  // the controls (a radio group, a button), in reading order; the inputs leave Tab order.
  var filterLabels = $all(".filters label");
  function syncFilters() {
    filterLabels.forEach(function (label) {
      var on = doc.getElementById(label.htmlFor).checked;
      label.setAttribute("aria-checked", String(on));
      label.tabIndex = on ? 0 : -1;  // one Tab stop; arrow keys move within the group
    });
  }
  // A label stands in for its hidden input: keys and clicks change the input, and focus
  // stays on the label (a label's click would move it to the input, out of Tab order).
  function press(label) {
    var input = doc.getElementById(label.htmlFor);
    var on = input.type === "radio" || !input.checked;
    if (input.checked !== on) { input.checked = on; input.dispatchEvent(new Event("change")); }
  }
  function pressable(label, onKey) {
    label.addEventListener("keydown", function (ev) {
      if (ev.key === " " || ev.key === "Enter") { ev.preventDefault(); press(label); }
      else if (onKey) onKey(ev);
    });
    label.addEventListener("click", function (ev) { ev.preventDefault(); press(label); label.focus(); });
  }
  $(".filters").setAttribute("role", "radiogroup");
  filterLabels.forEach(function (label, i) {
    label.setAttribute("role", "radio");
    pressable(label, function (ev) {
      var step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[ev.key];
      if (!step) return;
      ev.preventDefault();
      var next = filterLabels[(i + step + filterLabels.length) % filterLabels.length];
      press(next); next.focus();
    });
  });
  $all("input.flt").forEach(function (radio) {
    radio.tabIndex = -1; radio.setAttribute("aria-hidden", "true");
    radio.addEventListener("change", syncFilters);
  });
  syncFilters();
  var outlineToggle = $(".outline-toggle");
  if (outlineOpen && outlineToggle) {
    outlineOpen.tabIndex = -1; outlineOpen.setAttribute("aria-hidden", "true");
    outlineToggle.setAttribute("role", "button"); outlineToggle.tabIndex = 0;
    var syncOutline = function () { outlineToggle.setAttribute("aria-expanded", String(outlineOpen.checked)); };
    outlineOpen.addEventListener("change", syncOutline); syncOutline();
    pressable(outlineToggle);
  }
  // The floating "Outline" link on narrow screens: unfold the outline and go there, without
  // making #sidebar the page's target (that keeps the outline open whatever the toggle says).
  var toOutline = $(".to-outline");
  if (toOutline && outlineOpen) toOutline.addEventListener("click", function (ev) {
    ev.preventDefault();
    // a step in the history, so that Back returns to the entry the reader left, where it
    // was on the screen (the outline opening above it moves it: a scroll position would not)
    var from = readingPlace();
    try {
      if (from && from[0].id) {
        var here = { outlineFrom: from[0].id, at: from[1] };
        history.replaceState(Object.assign({}, history.state, here), "");
      }
      history.pushState(null, "", location.href);
    } catch (e) { /* a frame's own rules */ }
    openOutline();
    $("#sidebar").scrollIntoView({ block: "start" });
    // at the row of the entry being read, not at the outline's top (a long way from it)
    if (from) { markCurrent(from[0]); if (lastRow) followInOutline(lastRow); }
    search.focus({ preventScroll: true });  // keyboard focus goes where the reader went
  });
  window.addEventListener("popstate", function (ev) {
    var back = ev.state && ev.state.outlineFrom, entry = back && doc.getElementById(back);
    if (!entry) return;
    requestAnimationFrame(function () { backToPlace(entry, ev.state.at); });
  });
  // While the reader scrolls down it steps aside (it covered the end of a line, often an
  // entry's time); scrolling back up brings it back, as a phone's address bar does. At the
  // top, where the outline's own toggle is in view, it stays aside (it covered the facts).
  // Which way is read off an element at mid-screen, not scrollY: scrolling up into entries
  // not laid out yet, each takes its real height and the browser raises scrollY to keep the
  // reader's place, which read as scrolling down (the link flicked away and back).
  if (toOutline) {
    // At the top, aside. scrollY is not read now: that laid the whole page out while it was
    // still being read in (27 of the script's 30 ms on a 25-entry page, before its load
    // event); the script runs before the browser scrolls to a #fragment or a restored place,
    // so it read 0 anyway, and their scroll events say where the reader is.
    // ("moving", not "pending": that is the search's timer, in this same function scope: a
    // search left it a number, and the link stayed away for the rest of the visit)
    var moving = false, mark = null, markTop = 0, lastY = 0;
    var probe = function () {
      lastY = window.scrollY;
      mark = doc.elementFromPoint(innerWidth / 2, innerHeight / 2);
      if (mark) markTop = mark.getBoundingClientRect().top;
    };
    toOutline.classList.add("away");  // no probe yet either: it would lay out the page
    // The way the reader asked to go (a wheel, a finger, a key) wins for a second after:
    // the element at mid-screen moved too when entries between it and the browser's own
    // anchor were laid out, and read as scrolling down now and then while scrolling up.
    var asked = 0, askedAt = 0, fingerY = null;
    var ask = function (way) { asked = way; askedAt = Date.now(); };
    window.addEventListener("wheel", function (ev) { if (ev.deltaY) ask(ev.deltaY > 0 ? 1 : -1); }, { passive: true });
    window.addEventListener("touchstart", function (ev) { fingerY = ev.touches[0].clientY; }, { passive: true });
    window.addEventListener("touchmove", function (ev) {
      var y = ev.touches[0].clientY;
      if (fingerY !== null && Math.abs(y - fingerY) > 4) { ask(y < fingerY ? 1 : -1); fingerY = y; }
    }, { passive: true });
    doc.addEventListener("keydown", function (ev) {
      if (/^(PageDown|ArrowDown|End)$/.test(ev.key) || ev.key === " " && !ev.shiftKey) ask(1);
      else if (/^(PageUp|ArrowUp|Home)$/.test(ev.key) || ev.key === " ") ask(-1);
    });
    window.addEventListener("scroll", function () {
      if (moving) return;
      moving = true;
      requestAnimationFrame(function () {
        moving = false;
        var y = window.scrollY;
        var box = mark && mark.isConnected && mark.getBoundingClientRect();  // (0 high: hidden since)
        var moved = Date.now() - askedAt < 1000 ? asked * 8
          : box && box.height ? markTop - box.top : y - lastY;
        if (Math.abs(moved) < 8) return;
        toOutline.classList.toggle("away", y < 300 || moved > 0);
        probe();
      });
    }, { passive: true });
  }
  // The outline is one Tab stop, entered at the current row: Tab goes on to the entry being
  // read, Shift+Tab back to the controls above, and the arrow keys, Home and End move between
  // the rows shown (pi-branched-4's 1,354 rows were as many Tab stops before the page).
  function shownRow(i, step) {
    for (; i >= 0 && i < rows.length; i += step) if (rows[i].offsetParent !== null) return rows[i];
    return null;
  }
  // the arrow keys also stop at the line a folded branch opens from (Enter or Space opens it)
  var stops = $all("#tree li:not(.sub) > a, #tree .ob-t");
  // such a line is a checkbox (it works without the script); a screen reader hears what it
  // does: a button that expands the branch's rows (not "checkbox, not checked")
  function syncFold(box) { box.setAttribute("aria-expanded", String(box.checked)); }
  stops.forEach(function (el) { if (el.classList.contains("ob-t")) { el.setAttribute("role", "button"); syncFold(el); } });
  doc.addEventListener("change", function (ev) { if (ev.target.classList.contains("ob-t")) syncFold(ev.target); });
  function shownStop(i, step) {
    for (; i >= 0 && i < stops.length; i += step) if (stops[i].offsetParent !== null) return stops[i];
    return null;
  }
  function focusRow(row) {
    var a = row && $("a", row);
    if (a) a.focus();
    return !!a;
  }
  var tabbing = false;
  doc.addEventListener("keydown", function (ev) { tabbing = ev.key === "Tab"; }, true);
  doc.addEventListener("mousedown", function () { tabbing = false; }, true);
  // The row focused from outside the outline says how to move (a screen reader reads a
  // description of what has focus; on the list it was never read); the rows the arrows
  // reach do not repeat it (the whole keys line, 128 characters, was read at every row).
  var treeKeys = doc.createElement("p");
  treeKeys.id = "tree-keys"; treeKeys.hidden = true;
  treeKeys.textContent = "Up and Down arrows, Home and End move between rows; Tab leaves the outline";
  doc.body.appendChild(treeKeys);
  tree.addEventListener("focusin", function (ev) {
    var from = ev.relatedTarget;
    if (ev.target.matches && ev.target.matches("a, .ob-t")) {
      if (from && tree.contains(from)) ev.target.removeAttribute("aria-describedby");
      else ev.target.setAttribute("aria-describedby", "tree-keys");
    }
    if (!tabbing || (from && tree.contains(from))) return;
    // entered at the current row, else at the first row shown (Shift+Tab from below
    // entered at the last of 1,018 rows, the outline scrolled to its end)
    var row = lastRow && lastRow.offsetParent !== null ? lastRow : shownRow(0, 1);
    // the row moved to is described too: its own focusin came from inside the outline
    if (row && !row.contains(ev.target) && focusRow(row)) doc.activeElement.setAttribute("aria-describedby", "tree-keys");
  });
  tree.addEventListener("keydown", function (ev) {
    var a = ev.target.closest ? ev.target.closest("a, .ob-t") : null;
    if (!a || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    var i = stops.indexOf(a), next;
    if (ev.key === "Tab") {
      ev.preventDefault();
      if (ev.shiftKey) {
        var above = [outlineToggle, $(".filters label[tabindex='0']"), search].filter(function (el) {
          return el && el.offsetParent !== null;
        })[0];
        if (above) above.focus();
        return;
      }
      var entry = lastRow ? findTarget(hashOf($("a", lastRow))) : null;
      // the entry being read (the current row's, else the one mid-screen), else the page's
      // title (main itself showed no focus ring; the title, scrolled away, showed none either).
      // On a narrow screen the outline lies above the transcript, not beside it: the current
      // row's entry, wherever it is (not the title, for a reader who came from deep down);
      // either is scrolled into view (the title was focused a screen below the outline).
      var target = entry && entry.getClientRects().length && (inView(entry) || outlineToggle && outlineToggle.offsetParent) ? entry
        : entryMidScreen() || $("#content h1") || $("#content");
      if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
      target.focus({ preventScroll: true });
      // (centred, or by its top if tall: what is at the middle of the screen stays current)
      if (!inView(target)) target.scrollIntoView({ block: target.offsetHeight > innerHeight / 2 ? "start" : "center" });
      return;
    }
    if (ev.key === "Enter" && a.classList.contains("ob-t")) { ev.preventDefault(); a.click(); return; }
    if (ev.key === "ArrowDown") next = shownStop(i + 1, 1);
    else if (ev.key === "ArrowUp") next = shownStop(i - 1, -1);
    else if (ev.key === "Home") next = shownStop(0, 1);
    else if (ev.key === "End") next = shownStop(stops.length - 1, -1);
    else return;
    ev.preventDefault();
    if (next) next.focus();
  });
  function inView(el) {
    var box = el.getBoundingClientRect();
    return box.bottom > 0 && box.top < innerHeight;
  }
  function hashOf(a) {
    var h = a ? a.getAttribute("href").slice(1) : "";
    try { return decodeURIComponent(h); } catch (e) { return h; }
  }
  search.addEventListener("keydown", function (ev) {
    if (ev.key === "ArrowDown" && focusRow(shownRow(0, 1))) { ev.preventDefault(); return; }
    if (ev.key === "Enter") {
      var first = rows.filter(function (r) {
        return !r.classList.contains("search-miss") && !r.classList.contains("search-context") && r.offsetParent;
      })[0];
      if (first) { var a = $("a", first); if (a) a.click(); }
    }
  });

  // Deep links: #<entry id>, or Pi's ?targetId=<id> (and ?leafId=); open every enclosing <details>.
  // A #fragment names a page anchor; Pi's ?targetId= and ?leafId= name an entry's own id,
  // which may be a page part's ("tree") or another entry's anchor: each is looked up first
  // as what it names, then as the other.
  function findTarget(id, entryId) {
    if (!id) return null;
    var byId = doc.getElementById(id), byEntry = null;
    if (window.CSS && CSS.escape) byEntry = $('[data-entry-id="' + CSS.escape(id) + '"]');
    // only entries: a skip link to #content or #transcript was centred, mid-transcript
    if (byId && !byId.matches("[data-entry-id], article.entry")) byId = null;
    return entryId ? byEntry || byId : byId || byEntry;
  }
  var lastRow = null, userScrollAt = -Infinity, revealAt = -Infinity, followPending = 0, revealCount = 0;
  var touchedAt = -Infinity;  // the reader's last click or key: a reveal's settling stops
  ["pointerdown", "keydown"].forEach(function (kind) {
    addEventListener(kind, function () { touchedAt = performance.now(); }, true);
  });
  function reveal(id, asked, entryId) {
    var el = findTarget(id, entryId);
    if (!el) return false;
    for (var p = el.parentElement; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
    if (!el.getClientRects().length) {  // hidden by the current filter: show everything
      var all = doc.getElementById("flt-all");
      // as a click would: the radios' states, the Tab stop and the status line follow
      if (all) { all.checked = true; all.dispatchEvent(new Event("change")); }
    }
    // Opened while searching: the terms are marked in it, and its first match is what the
    // reader came for (a term deep in a long output would otherwise be a screen away).
    var match = null;
    if (search.value) { markedEntry = el; match = markTerms(); }
    // An instant scroll, checked again once the entries around the target have rendered:
    // off-screen entries have placeholder heights (content-visibility), so a smooth scroll
    // aimed at the first estimate ends up far from the target.
    // A tall entry is placed by its top (centred, its header would be off screen); a match
    // is centred itself (its element may be a whole tall output).
    function place() {
      el.scrollIntoView({ block: el.getBoundingClientRect().height > innerHeight * 0.6 ? "start" : "center" });
      if (match) scrollBy(0, match.getBoundingClientRect().top - innerHeight / 2);
    }
    place();
    // Placed again while the entries around it take their real heights, for up to ~2 s or
    // until it stays put for ~0.5 s: one look two frames on came before a tall entry above
    // (pi-v1's 5,500 px L8) was drawn, which then pushed the target off screen for good.
    // Never against the reader: their own scrolling, a click or a key, or another jump,
    // ends it (a branch closed right after a link opened it was placed into view again).
    var token = ++revealCount, placedAt = (match || el).getBoundingClientRect().top;
    function settle(frames, still) {
      if (token !== revealCount || userScrollAt > revealAt || touchedAt > revealAt) return;
      if (frames <= 0 || still >= 30 || !el.getClientRects().length) return;  // (folded again)
      var top = (match || el).getBoundingClientRect().top;
      if (Math.abs(top - placedAt) > 1) { place(); placedAt = (match || el).getBoundingClientRect().top; still = 0; }
      requestAnimationFrame(function () { settle(frames - 1, still + 1); });
    }
    requestAnimationFrame(function () { settle(120, 0); });  // (from the next frame: revealAt is set below)
    if (asked) {  // the reader asked for it: keyboard focus follows (Tab continues from here)
      if (!el.hasAttribute("tabindex")) el.setAttribute("tabindex", "-1");
      el.focus({ preventScroll: true });
    }
    el.classList.add("highlight");
    // for 2 s once the page is whole: from a deep link on a big page, a timer set while it
    // was still loading ran out before a reader saw the page
    afterLoad(function () { setTimeout(function () { el.classList.remove("highlight"); }, 2000); });
    revealAt = performance.now(); userScrollAt = -Infinity;  // this jump is not the reader's scrolling
    markCurrent(el);
    return true;
  }
  // The entry's outline row becomes the current one ("you are here"), kept in view.
  function markCurrent(el, following) {
    byScrolling = !!following;  // (a jump or a click marks it otherwise)
    var anchor = el.id, link = anchor && window.CSS && CSS.escape ? $('#tree a[href="#' + CSS.escape(anchor) + '"]') : null;
    var row = link ? link.parentElement : null;
    if (row && row === lastRow) return;
    if (lastRow) { lastRow.classList.remove("current"); $("a", lastRow).removeAttribute("aria-current"); }
    lastRow = row;
    if (row) {
      row.classList.add("current");
      link.setAttribute("aria-current", "location");
      unfoldOutlineTo(row);
      if (!(following && mouseOnOutline)) followInOutline(row);
    }
  }
  // Following the reader's scrolling leaves the outline still while a mouse is over it: a
  // row about to be clicked moved away under the pointer (a wheel's glide, then a look
  // again 300 ms after it, went on moving it once the pointer had reached the outline).
  var mouseOnOutline = false, outlineBox = $("#sidebar");
  if (outlineBox) {
    outlineBox.addEventListener("pointerenter", function (ev) { mouseOnOutline = ev.pointerType === "mouse"; });
    outlineBox.addEventListener("pointerleave", function () { mouseOnOutline = false; });
  }
  function unfoldOutlineTo(row) {  // a folded branch of the outline opens to the row
    for (var sub = row.parentElement.closest("li.sub"); sub; sub = sub.parentElement.closest("li.sub")) {
      var fold = $(":scope > .ob > .ob-t", sub);
      if (fold) { fold.checked = true; syncFold(fold); }
    }
  }
  // A branch opened in the transcript opens in the outline too (it stayed folded there)
  doc.addEventListener("toggle", function (ev) {
    var first = ev.target.open && ev.target.matches("details.branch") && $("[data-entry-id]", ev.target);
    var link = first && window.CSS && $('#tree a[href="#' + CSS.escape(first.id) + '"]');
    if (link) unfoldOutlineTo(link.parentElement);
  }, true);
  // The current row also follows the reader's own scrolling (wheel, touch, scroll keys):
  // the entry at the middle of the screen. Not a jump this script made (the entry it
  // revealed stays current), nor a scroll nobody asked for.
  function readerScrolls() { userScrollAt = performance.now(); }
  addEventListener("wheel", readerScrolls, { passive: true });
  addEventListener("touchmove", readerScrolls, { passive: true });
  addEventListener("keydown", function (ev) {
    if (/^(PageDown|PageUp|ArrowDown|ArrowUp|Home|End| )$/.test(ev.key) &&
        !/^(INPUT|TEXTAREA|SELECT|BUTTON)$/.test(ev.target.tagName)) readerScrolls();
  });
  addEventListener("scroll", function () {
    var now = performance.now();
    if (now - userScrollAt > 1000 || now - revealAt < 1000) return;
    userScrollAt = now;  // a smooth scroll goes on following to its end
    if (followPending) return;
    followPending = requestAnimationFrame(function () {
      followPending = 0;
      var entry = entryMidScreen();
      if (entry) markCurrent(entry, true);
      // entries rendered as they come into view (content-visibility) move what is at the
      // middle once more, and a long jump may land between two entries: look again then
      clearTimeout(settle);
      settle = setTimeout(function () {
        if (performance.now() - revealAt < 1000) return;  // a jump this script made
        var later = entryMidScreen();
        if (later) markCurrent(later, true);
      }, 300);
    });
  }, { passive: true });
  var settle = 0, byScrolling = false, transcript = $("#transcript");
  // Entries drawn late (content-visibility; on a busy machine seconds after the scroll,
  // long after the look again) move what is at the middle without any scroll: while the
  // current row follows the scrolling, it follows the column's height changes too.
  if (transcript && window.ResizeObserver) new ResizeObserver(function () {
    var entry = byScrolling && performance.now() - revealAt > 1000 && entryMidScreen();
    if (entry) markCurrent(entry, true);
  }).observe(transcript);
  // The entry at the middle of the screen, if the transcript is there.
  function entryMidScreen() {
    var column = $("#transcript");
    if (!column) return null;
    var box = column.getBoundingClientRect(), mid = innerHeight / 2;
    if (box.top > mid + 120 || box.bottom < mid - 120) return null;  // (~90 looks for nothing)
    // the middle may fall between two entries (or on a fork's summary): the nearest one
    // a little below or above it is the one being read. Looked for across the column, not
    // at its left edge alone: two branches in, that edge is their indent (no entry there).
    for (var step = 0; step <= 120; step += 12) {
      for (var sign = 1; sign >= -1; sign -= 2) {
        for (var x = box.left + Math.min(40, box.width / 2); x < box.right; x += box.width / 4) {
          var hit = doc.elementFromPoint(x, mid + sign * step), entry = hit && hit.closest("[data-entry-id]");
          if (entry) return entry;
        }
      }
    }
    return null;
  }
  // Where the reader is: that entry and its top on the screen; and putting it back there
  // (a scroll position alone drifts when entries above are laid out meanwhile).
  function readingPlace() {
    var entry = entryMidScreen();
    return entry ? [entry, entry.getBoundingClientRect().top] : null;
  }
  function backToPlace(entry, top) { scrollBy(0, entry.getBoundingClientRect().top - top); }
  // A row that gets focus (Shift+Tab back up the outline) is not left under the sticky
  // search bar: the outline scrolls it below the bar, however tall the bar wraps.
  var sideTop = $(".side-top"), sideBox = $("#sidebar");
  if (sideTop && sideBox && window.ResizeObserver) {
    new ResizeObserver(function () {  // (none when the bar scrolls away: a short window)
      var sticky = getComputedStyle(sideTop).position === "sticky";
      sideBox.style.scrollPaddingTop = sticky ? (sideTop.offsetHeight + 4) + "px" : "0px";
    }).observe(sideTop);
  }
  // Keep the current row visible in the outline without moving the page itself. (The chunk
  // holding the row is laid out whole, page.css: off screen it kept its last height while
  // a branch in it unfolded to the row, and no scroll reached the row past the outline's end.)
  function followInOutline(row) {
    var side = $("#sidebar");
    if (!side || side.scrollHeight <= side.clientHeight) return;
    var top = row.getBoundingClientRect().top - side.getBoundingClientRect().top + side.scrollTop;
    var room = side.clientHeight;
    if (top < side.scrollTop + 60 || top > side.scrollTop + room - 40) side.scrollTop = Math.max(0, top - room / 3);
  }
  function idOf(fragment) {
    try { return decodeURIComponent(fragment); } catch (e) { return fragment; }
  }
  function hashId() { return idOf(location.hash.slice(1)); }
  // Pi's share viewer shows a page through <iframe srcdoc>: a "#id" link resolves against
  // the viewer's address there (following one loaded the viewer again inside the frame),
  // and the viewer passes its address's ?targetId= / ?leafId= in a meta tag.
  var framed = location.href === "about:srcdoc";
  function metaContent(name) {
    var meta = $('meta[name="' + name + '"]');
    return meta ? meta.getAttribute("content") || "" : null;
  }
  // A link to an entry this page does not hold says so, instead of leaving the reader at
  // the top wondering (a mistyped id, or a link made for another export of the session).
  var missNote = null;
  function missing(id) {
    if (!missNote) {
      missNote = doc.createElement("p");
      missNote.className = "link-miss"; missNote.setAttribute("role", "status");
      $("#content").insertBefore(missNote, $("#content").firstChild);
    }
    missNote.hidden = !id;
    missNote.textContent = "";
    if (!id) return;
    // the id is the address's text: control and direction characters are shown as signs
    var shown = id.replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, function (c) {
      return "\u27e8U+" + ("000" + c.charCodeAt(0).toString(16).toUpperCase()).slice(-4) + "\u27e9";
    });
    if (shown.length > 80) shown = shown.slice(0, 79) + "\u2026";
    var name = doc.createElement("bdi");
    name.textContent = shown;
    missNote.append("This page has no entry \u201c", name, "\u201d; the link may be from another export of the session.");
    var box = missNote.getBoundingClientRect();
    if (box.top < 0 || box.bottom > innerHeight) missNote.scrollIntoView({ block: "start" });
  }
  function go(id, asked, entryId) {
    var found = reveal(id, asked, entryId);
    // ids of the page's own parts (#transcript, a branch block) are fine as they are
    var absent = !found && id && (entryId || !doc.getElementById(id));
    missing(absent ? id : "");
    // the entry opened before keeps no focus ring that would say "you are here"
    if (absent && doc.activeElement && doc.activeElement.matches("article.entry")) doc.activeElement.blur();
    return found;
  }
  function fromLocation() {
    var hash = hashId();
    if (hash && go(hash, false)) {
      // the browser scrolls to a #fragment itself once the page has loaded, after this
      // script centred it: the entry ended flush at the top, its branch's line off screen
      var el = findTarget(hash);
      afterLoad(function () {
        if (hashId() === hash && Math.abs(el.getBoundingClientRect().top) < 40) reveal(hash, false);
      });
      return;
    }
    var injected = metaContent("pi-url-params");
    var params = new URLSearchParams(injected === null ? location.search : injected);
    // Pi's share links name the entry as ?targetId=: focus it, as a #fragment would set where
    // Tab goes on (after a script's scroll, Tab started again at the top of the page)
    var target = params.get("targetId"), leaf = params.get("leafId");
    if (target) go(target, true, true);
    else if (leaf) openBranchOf(leaf);
  }
  // Pi's ?leafId= alone renders the conversation up to that leaf: open the branch it ends
  // and start the reader where that branch leaves the transcript (on the transcript, the top).
  function openBranchOf(id) {
    var el = findTarget(id, true), outer = null;
    if (!el) return missing(id);
    for (var p = el.parentElement; p; p = p.parentElement) {
      if (p.tagName !== "DETAILS") continue;
      p.open = true;
      if (p.classList.contains("branch")) outer = p;
    }
    if (!outer) return;
    var summary = $("summary", outer);
    outer.scrollIntoView({ block: "start" });
    summary.focus({ preventScroll: true });
    markCurrent(el);
  }
  window.addEventListener("hashchange", function () { go(hashId(), true); });
  // Following a link to the hash already in the address bar fires no hashchange (an outline
  // row, a label, a "forks at" link, clicked again after a filter change).
  doc.addEventListener("click", function (ev) {
    var a = ev.target.closest && ev.target.closest("a[href^='#']");
    if (!a || a.matches("a.permalink, a.ts")) return;
    if (framed) {  // followed here: the browser would load the viewer's address
      ev.preventDefault();
      var id = idOf(a.getAttribute("href").slice(1)), part = doc.getElementById(id);
      if (!go(id, true) && part) { part.scrollIntoView(); if (part.tabIndex >= 0 || part.hasAttribute("tabindex")) part.focus(); }
    } else if (a.getAttribute("href") === location.hash) reveal(hashId(), true);
  });
  fromLocation();

  // Copy link: clicking an entry's "#" or time copies its address too, and says whether it
  // did (a page in a sandboxed frame may not write the clipboard); a screen reader hears it.
  var spoken = doc.createElement("p");
  spoken.className = "sr-only"; spoken.setAttribute("role", "status");
  doc.body.appendChild(spoken);
  function copyNote(a, text) {
    a.setAttribute("data-note", text); a.classList.add("copied"); spoken.textContent = text;
    setTimeout(function () { a.classList.remove("copied"); spoken.textContent = ""; }, 1500);
  }
  // Copies text, and says on `el` whether it did ("link copied"; "copied" with no `noun`).
  function copyText(el, text, noun) {
    var failed = function () { copyNote(el, "the browser did not let this page copy" + (noun ? " the " + noun : "")); };
    // a frame whose policy forbids the clipboard: asking anyway only logs an error
    var policy = doc.permissionsPolicy || doc.featurePolicy;
    if (policy && policy.allowsFeature && !policy.allowsFeature("clipboard-write")) return failed();
    if (!navigator.clipboard || !navigator.clipboard.writeText) return failed();
    navigator.clipboard.writeText(text).then(function () { copyNote(el, "\u2713 " + (noun ? noun + " " : "") + "copied"); }, failed);
  }
  doc.addEventListener("click", function (ev) {
    var a = ev.target.closest && ev.target.closest("a.permalink, a.ts");
    if (!a) return;
    var url = location.href.split("#")[0] + a.getAttribute("href");
    var base = framed ? metaContent("pi-share-base-url") : null, entry = a.closest("[data-entry-id]");
    if (base && entry) url = base + "&targetId=" + encodeURIComponent(entry.getAttribute("data-entry-id"));
    // the address bar takes the link, and the reader stays where they are: following it
    // moved the focus to the whole entry and scrolled it to the middle of the screen
    if (ev.button === 0 && !(ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.altKey)) {
      ev.preventDefault();
      if (!framed) try { history.replaceState(history.state, "", url); } catch (e) { /* a frame's own rules */ }
    }
    copyText(a, url, "link");
  });
  // Copy buttons for code blocks, shell commands and tool outputs (a folded one copied
  // whole, both its parts). Made after the page has loaded, a few
  // hundred at a time, so a long page opens no slower; without a script there are none.
  function copyButton(label, what, text) {
    var button = doc.createElement("button");
    button.type = "button"; button.className = "copy-btn"; button.textContent = label;
    button.setAttribute("aria-label", "Copy " + what);
    button.addEventListener("click", function () { copyText(button, text()); });
    return button;
  }
  // A text shown in two parts around a fold, joined as it was: "N more characters", the
  // fold cut inside a line; else a head ending on a blank line carries one more line
  // break, for the eye only. A long output, a long command, a long code block.
  function joined(first, last, fold) {
    var inLine = / characters/.test($("summary", fold).textContent);
    return function () {
      return inLine ? first.textContent + last.textContent
        : first.textContent.replace(/\n$/, "") + "\n" + last.textContent;
    };
  }
  function foldedOutput(fold, shown) {
    var hidden = $(":scope > pre.out", fold), before = fold.classList.contains("fold-before");
    if (!hidden || (before ? fold.nextElementSibling : fold.previousElementSibling) !== shown) return null;
    return before ? joined(hidden, shown, fold) : joined(shown, hidden, fold);
  }
  // The rest of a code block a fold cut through, first in the fold after the block's head
  // and with no language label again: a long block in an answer, or one a long prompt's
  // fold cut (a whole block in or above that fold is copied alone)
  function restOf(head) {  // the rest of a block a fold cut (the renderer marks it "cont")
    var fold = head.nextElementSibling;
    return fold && fold.matches("details.fold") && $(":scope > summary + .cont", fold) || null;
  }
  function addCopyButtons(block) {
    if (block.classList.contains("code")) {
      var pre = $("pre", block), rest = restOf(block), prior = block.parentElement.previousElementSibling;
      // a rest is copied with its head, never alone
      if (pre && !(prior && prior.matches(".code") && restOf(prior) === block)) {
        block.appendChild(copyButton("Copy", "this code", rest ? joined(pre, $("pre", rest), rest.parentElement)
          : function () { return pre.textContent; }));
      }
      return;
    }
    var head = $(":scope > .tool-head", block);
    if (!head) return;
    var path = $("code.path", head);
    if (path) breakPath(path);
    var cmd = $("code.cmd", head), cmdRest = $(":scope > details.cmd-rest", block);
    if (cmd) {  // a long command copied whole, its folded lines too
      head.appendChild(copyButton("Copy", "the command", cmdRest ? joined(cmd, $("pre", cmdRest), cmdRest)
        : function () { return cmd.textContent; }));
    }
    var outs = $all(":scope > pre.out", block);  // an edit's or a write's is a status line
    var folds = $all(":scope > details.fold:not(.cmd-rest)", block), whole = null;
    if (outs.length === 1 && !block.matches(".tool-edit, .tool-write")) {
      if (!folds.length) whole = function () { return outs[0].textContent; };
      else if (folds.length === 1) whole = foldedOutput(folds[0], outs[0]);
    }
    // after the "#", outside the call's heading (its name was read with "Copy output")
    if (whole) head.appendChild(copyButton("Copy output", "output", whole));
    // the file a write made, an edit's diff: whole, both parts of a long one
    var body = block.matches(".tool-write, .tool-edit") && $(":scope > pre.code, :scope > pre.diff", block);
    if (body) {
      var bodyFold = body.nextElementSibling, bodyRest = bodyFold && bodyFold.matches("details.fold") && $(":scope > pre", bodyFold);
      var isDiff = body.classList.contains("diff"), shown = bodyRest ? joined(body, bodyRest, bodyFold)
        : function () { return body.textContent; };
      head.appendChild(copyButton(isDiff ? "Copy diff" : "Copy file", isDiff ? "the diff" : "the text written",
        isDiff ? shown : fileWritten(shown, body.getAttribute("data-eol") || "")));
    }
  }
  // The file as written, not as a <pre> shows it: its last line break (or none: data-eol
  // "n"), CRLF ends ("r"), a lone CR shown as ␍ ("c"), a byte-order mark ("b"); see
  // tools.py _copy_ends
  function fileWritten(shown, eol) {
    return function () {
      var text = shown();
      if (eol.indexOf("n") < 0 && !/\n$/.test(text)) text += "\n";  // a blank last line shows its own
      if (eol.indexOf("r") >= 0) text = text.replace(/\n/g, "\r\n");
      if (eol.indexOf("c") >= 0) text = text.replace(/\u240d/g, "\r");
      return eol.indexOf("b") >= 0 && text.charAt(0) !== "\ufeff" ? "\ufeff" + text : text;
    };
  }
  // A wide diff or code block scrolls sideways, so the browser makes it a Tab stop, which a
  // screen reader named with its whole text (2,025 characters): named when it gets focus
  doc.addEventListener("focusin", function (ev) {
    var pre = ev.target, tool = pre.closest && pre.closest(".tool");
    if (pre.tagName !== "PRE" || pre.hasAttribute("aria-label")) return;
    var path = tool && $("code.path", tool), kind = pre.classList.contains("diff") ? "Diff" : "Text";
    pre.setAttribute("role", "group");
    pre.setAttribute("aria-label", kind + (path ? " of " + path.textContent : "") + ", scrolls sideways");
  });
  // A tool's path wraps after a "/", not inside a name ("coding-" over "agent/src/...", "dark"
  // over ".json" on a phone); a name too long for a line still breaks where it must
  function breakPath(code) {
    var text = code.textContent;
    if (code.firstElementChild || text.indexOf("/") < 0) return;
    code.textContent = "";
    var parts = text.split("/");
    parts.forEach(function (part, i) {
      if (i < parts.length - 1) part += "/";  // the "/" ends its line, never starts the next
      if (part.length > 25) code.append(part);
      else { var name = doc.createElement("span"); name.className = "seg"; name.textContent = part; code.append(name); }
      if (i < parts.length - 1) code.append(doc.createElement("wbr"));
    });
  }
  var copyQueue = null;
  function addCopyButtonsLater() {
    copyQueue = copyQueue || $all("div.code, .tool");
    var batch = copyQueue.splice(0, 300);
    batch.forEach(addCopyButtons);
    if (copyQueue.length) (window.requestIdleCallback || setTimeout)(addCopyButtonsLater);
  }
  afterLoad(function () { (window.requestIdleCallback || setTimeout)(addCopyButtonsLater); });

  // What an entry's time link does, for screen readers (one description for all of them)
  var tsHelp = doc.createElement("p");
  tsHelp.id = "ts-help"; tsHelp.hidden = true;
  tsHelp.textContent = "link to this entry; activating it copies the address";
  doc.body.appendChild(tsHelp);
  doc.addEventListener("focusin", function (ev) {
    var a = ev.target.closest && ev.target.closest("a.permalink, a.ts");
    if (a && !a.hasAttribute("aria-describedby")) a.setAttribute("aria-describedby", "ts-help");
  });

  // Keyboard: / search, t thinking, o tool output, Esc clears. The single-key ones can be
  // turned off (remembered like the theme): speech input or a stray key must not fire them.
  var KEYS_KEY = "pi-session-export:single-keys", singleKeys = true, keysToggle = $("#keys-toggle");
  try { singleKeys = localStorage.getItem(KEYS_KEY) !== "off"; } catch (e) { /* ignore */ }
  function syncKeys() {
    if (!keysToggle) return;
    // its words say the state (a pressed state besides, "…off, not pressed", read as a double negative)
    keysToggle.textContent = "Single-key shortcuts " + (singleKeys ? "on" : "off");
    $(".keys").classList.toggle("keys-off", !singleKeys);
  }
  if (keysToggle) keysToggle.addEventListener("click", function () {
    singleKeys = !singleKeys;
    try { localStorage.setItem(KEYS_KEY, singleKeys ? "on" : "off"); } catch (e) { /* ignore */ }
    syncKeys();
  });
  syncKeys();
  // [scrollY before "/", scrollY after it, the element focused before it]; forgotten once the
  // reader leaves the search box (Esc later would send them back to a place left long ago)
  var jumped = null;
  search.addEventListener("blur", function () { jumped = null; });
  doc.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var tag = (ev.target.tagName || "").toLowerCase();
    // a filter radio or the outline checkbox keeps focus after a click: keys still work there
    var typing = (tag === "input" && /^(search|text)$/.test(ev.target.type)) || tag === "textarea" ||
      tag === "select" || ev.target.isContentEditable;
    // Tab leaves an enlarged image closed: focus would go on to controls under its backdrop
    if (ev.key === "Tab") { $all(".zoom-toggle:checked").forEach(function (z) { z.checked = false; }); return; }
    if (ev.key === "Escape") {
      var zoomed = $all(".zoom-toggle:checked");
      zoomed.forEach(function (z) { z.checked = false; });
      if (zoomed.length) return;
      // the first Esc clears the search and stays there; Esc in an empty field leaves it
      if (ev.target === search && search.value) { search.value = ""; runSearch(); return; }
      if (search.value) { search.value = ""; runSearch(); }
      // focus goes back to where "/" was pressed (it fell to the page's body, and Tab went
      // on from the outline), and so does the page, if that jump is still where the reader
      // is (on narrow screens the search sits at the top of the page, not beside the text)
      var jump = ev.target === search ? jumped : null, back = jump ? jump[2] : null;
      if (back && back !== doc.body && back.isConnected && back.getClientRects().length) back.focus({ preventScroll: true });
      else if (typing) ev.target.blur();
      if (jump && scrollY === jump[1]) {
        // the entry the reader was at, back where it was: entries laid out at the top
        // meanwhile moved it, so a scroll position alone left it ~20 px off
        var at = jump[3];
        if (at && at[0].isConnected) backToPlace(at[0], at[1]);
        else scrollTo(0, jump[0]);
      }
      jumped = null;
      return;
    }
    if (typing) return;
    // an image enlarges with Enter as with Space (it is a checkbox under the picture)
    if (ev.key === "Enter" && ev.target.classList.contains("zoom-toggle")) { ev.preventDefault(); ev.target.click(); return; }
    if (!singleKeys) return;
    if (ev.key === "/") {
      ev.preventDefault();
      var from = scrollY, was = doc.activeElement, at = readingPlace();
      search.focus();
      jumped = [from, scrollY, was, at];
    }
    else if (ev.key === "t" || ev.key === "o") {
      var id = ev.key === "t" ? "toggle-thinking" : "toggle-tools", b = $("#" + id), shut = null;
      b.click();  // the button keeps aria-pressed true
      // a fold closed around the focus: its summary takes it (it fell to the page's body)
      for (var d = ev.target.closest("details"); d; d = d.parentElement.closest("details")) if (!d.open) shut = d;
      if (shut) $(":scope > summary", shut).focus();
      // focus stays where it was: a screen reader hears what the key did
      var n = $all(toggles[id]).length;
      var state = b.getAttribute("aria-pressed") === "true" ? " unfolded" : " folded";
      spoken.textContent = b.textContent.trim() + ": " + (n ? "all " + thousands(n) + state : "none on this page");
    }
  });

  // Printing: open what the print stylesheet unfolds (for browsers without ::details-content),
  // and close it again afterwards.
  var printOpened = [];
  window.addEventListener("beforeprint", function () {
    printOpened = $all("details:not(.branch):not(.branch-group):not([open])");
    printOpened.forEach(function (d) { d.open = true; });
  });
  window.addEventListener("afterprint", function () {
    printOpened.forEach(function (d) { d.open = false; });
    printOpened = [];
  });

  // Download JSONL: the page carries the session gzip-compressed in the footer's link (which
  // downloads the .gz without a script); rebuild the plain file locally.
  var dl = $("#download-jsonl"), data = $("#session-jsonl");
  if (dl && data && window.DecompressionStream) {
    show(dl);
    dl.addEventListener("click", function () {
      var href = data.getAttribute("href"), b64 = href.slice(href.indexOf(",") + 1);
      var bin = atob(b64), bytes = new Uint8Array(bin.length);
      for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      new Response(stream).blob().then(function (blob) {
        var a = doc.createElement("a");
        a.href = URL.createObjectURL(new Blob([blob], { type: "application/x-ndjson" }));
        a.download = data.getAttribute("data-file") || "session.jsonl";
        doc.body.appendChild(a); a.click(); a.remove();
        setTimeout(function () { URL.revokeObjectURL(a.href); }, 10000);
      });
    });
  }
})();
