/* pi-session-export site index: progressive enhancement only. The table is complete and
   sorted by last activity without this script; it adds column sorting, a filter box that also
   searches the sessions' prompts, and local times (the theme toggle is theme.js). No network
   access (the page's CSP forbids it anyway). */
// A count said once the typing pauses, as the session page says its search's: the count on
// screen follows each key, but as a live region it queued a count per key (five for "theme"),
// the same one said again and again. Its words go to a screen-reader-only status 600 ms after
// the last change, and only when they differ from what it said last. (The filter's and the
// text search's, each in its own function below.)
function sayOncePaused(shown, said) {
  "use strict";
  var timer = 0;
  return function () {
    if (!said) return;
    clearTimeout(timer);
    timer = setTimeout(function () {
      if (said.textContent !== shown.textContent) said.textContent = shown.textContent;
    }, 600);
  };
}

// Composed (NFC): "café" typed is found in a macOS path stored decomposed ("e" and a
// combining accent), and the other way round. The site's search index is composed when it is
// built; the filter's texts are composed here, before they are folded and shown.
function composed(text) {
  "use strict";
  return String(text).normalize("NFC");
}

// Lower case, each character kept where it was: "İ".toLowerCase() is "i̇" (i and a combining
// dot, two characters), so "istanbul" was not found in "İstanbul" and every offset after it
// was one off (nothing marked). İ is the one character whose lower case is longer; it is
// folded to a plain "i", as a reader typing "istanbul" means it.
function foldCase(text) {
  "use strict";
  var lower = text.replace(/\u0130/g, "i").toLowerCase();
  if (lower.length === text.length) return lower;
  return Array.prototype.map.call(text, function (c) {  // (a later Unicode's other one)
    var l = c.toLowerCase();
    return l.length === 1 ? l : c;
  }).join("");
}

// text[from, to) into target as text nodes, the spans in it ([start, end] pairs, in order) as
// <mark>s (never markup): the filter's prompt lines and the text search's snippets.
function appendMarked(target, text, marks, from, to) {
  "use strict";
  var last = from;
  marks.forEach(function (r) {
    var start = Math.max(r[0], last), end = Math.min(r[1], to);
    if (end <= start) return;
    target.appendChild(document.createTextNode(text.slice(last, start)));
    var mark = document.createElement("mark");
    mark.textContent = text.slice(start, end);
    target.appendChild(mark);
    last = end;
  });
  target.appendChild(document.createTextNode(text.slice(last, to)));
}

// A cost as the rows and the session pages write it: exporter/formatting.py's fmt_cost, rule
// for rule (the filter's status chose its decimals from the amount before rounding, and
// wrote "$0.0000" beside a row's "<$0.0001", "$1.000" beside "$1.00").
function costText(value) {
  "use strict";
  if (!isFinite(value)) return "overflow";  // inf, -inf, and their sum (NaN)
  if (value < 0) {
    var shown = costText(-value);
    if (shown.charAt(0) === "<") return ">-$0.0001";
    return /^[$0.]*$/.test(shown) ? shown : "-" + shown;  // no "-$0.0000"
  }
  value = Math.abs(value);  // -0 too
  if (!(value < 1e12)) return "$" + threeFigures(value);
  if (value && Number(fixedDigits(value, 4)) === 0) return "<$0.0001";
  if (value && Number(fixedDigits(value, 4)) < 0.01) return "$" + grouped(fixedDigits(value, 4));
  if (value && Number(fixedDigits(value, 3)) < 1) return "$" + grouped(fixedDigits(value, 3));
  return "$" + grouped(fixedDigits(value, 2));
}

// Python's f"{value:.{places}f}" for 0 <= value < 1e21: the number the float is exactly,
// rounded half to even. toFixed rounds that number too, but a tie up ($1.125 is exactly a
// float: Python writes "1.12", toFixed "1.13").
function fixedDigits(value, places) {
  "use strict";
  var text = value.toFixed(places), exact = value.toFixed(100);
  var cut = exact.indexOf(".") + 1 + places;
  if (exact.charAt(cut) !== "5" || /[1-9]/.test(exact.slice(cut + 1))) return text;
  var down = exact.slice(0, cut);
  return Number(down.charAt(down.length - 1)) % 2 === 0 ? down : text;
}

// Python's f"{value:.3g}" for value >= 1e12 (always in e-notation there): "1e+12", "1.8e+308".
function threeFigures(value) {
  "use strict";
  var exact = value < 1e21 ? value.toFixed(100) : BigInt(value).toString();
  var point = exact.indexOf(".") === -1 ? exact.length : exact.indexOf(".");
  var digits = exact.replace(".", ""), rest = digits.slice(3), exponent = point - 1;
  var head = Number(digits.slice(0, 3)), next = rest.charAt(0);
  if (next > "5" || (next === "5" && (/[1-9]/.test(rest.slice(1)) || head % 2 === 1))) head += 1;
  if (head === 1000) { head = 100; exponent += 1; }
  var mantissa = (String(head).charAt(0) + "." + String(head).slice(1)).replace(/\.?0+$/, "");
  return mantissa + "e+" + (exponent < 10 ? "0" : "") + exponent;
}

// "1234567.891" as "1,234,567.891", as Python's "{:,}" groups the whole dollars.
function grouped(text) {
  "use strict";
  return text.replace(/^\d+/, function (whole) { return whole.replace(/\B(?=(\d{3})+$)/g, ","); });
}

// What the reader set on this page (the sort, the text search and the matches listed under
// it) and where they were, kept in the page's own entry of the tab's history. Back from a
// session page loads a file:// page anew (Chrome's back-forward cache keeps http(s) pages
// only): the order and the search results were gone while the browser put the scroll back,
// so other sessions sat where the clicked one had been. (The filter box the browser refills.)
var listingState = (function () {
  "use strict";
  var kept = {}, scroll = null, waiting = 0, readerMoved = false;
  try {
    var state = history.state;
    if (state && typeof state === "object" && !Array.isArray(state)) kept = state;
  } catch (e) { /* no history to read: nothing kept */ }
  if (Array.isArray(kept.scroll) && kept.scroll.every(isFinite)) scroll = kept.scroll;
  function save() {
    try { history.replaceState(kept, ""); } catch (e) { /* a sandboxed frame: not kept */ }
  }
  // A link to a place on the page (#sessions) starts an entry of its own: it keeps the same.
  window.addEventListener("hashchange", save);
  window.addEventListener("pagehide", function () {
    kept.scroll = [window.scrollX, window.scrollY];
    save();
  });
  // A reader who scrolls, clicks or types before the restored results are drawn stays put.
  ["wheel", "touchstart", "mousedown", "keydown"].forEach(function (type) {
    window.addEventListener(type, function () { readerMoved = true; }, { capture: true, passive: true });
  });
  return {
    get: function (name) { return kept[name]; },
    set: function (name, value) { kept[name] = value; save(); },
    // A filter or search put back after the browser restored the scroll (the rows it hides
    // and the results it lists come from an index unpacked first): once every one is drawn,
    // the page goes back to where the reader left it.
    restoring: function (work) {
      if (!scroll || !work || typeof work.then !== "function") return;
      waiting += 1;
      var done = function () {
        waiting -= 1;
        if (waiting || !scroll) return;
        if (!readerMoved) window.scrollTo(scroll[0], scroll[1]);
        scroll = null;
      };
      work.then(done, done);
    }
  };
})();

(function () {
  "use strict";
  var doc = document;

  function $(sel, el) { return (el || doc).querySelector(sel); }
  function $all(sel, el) { return Array.prototype.slice.call((el || doc).querySelectorAll(sel)); }

  // Local times (the server wrote UTC); the header's period names the zone, the rows follow it.
  // Written as `list` prints them and the session pages show them (2026-11-30 00:57), not in
  // the browser's locale style ("Nov 30, 2026, 12:57 AM"): one form to compare across them.
  function pad(n) { return n < 10 ? "0" + n : "" + n; }
  function localMinute(d) {
    var y = d.getFullYear();  // year 999 as 0999, as the server writes it
    return (y < 1e3 ? ("000" + y).slice(-4) : y) + "-" + pad(d.getMonth() + 1) + "-" +
      pad(d.getDate()) + " " + pad(d.getHours()) + ":" + pad(d.getMinutes());
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
    t.textContent = localMinute(d) + (t.closest(".facts") ? " " + utcOffset(d) : "");
  });

  // On a phone the chart scrolls sideways: start at its newest bars, not a year ago.
  var chart = $(".chart");
  if (chart && chart.scrollWidth > chart.clientWidth) chart.scrollLeft = chart.scrollWidth;

  var table = $("#session-table");
  if (!table) return;
  var body = table.tBodies[0];
  var rows = $all("tr", body).filter(function (r) { return r.cells.length > 1; });
  var heads = $all("thead th", table);

  // A cell's text without the prompts a search listed in it.
  function ownText(cell) {
    return Array.prototype.map.call(cell.childNodes, function (n) {
      return n.nodeType === 1 && n.classList.contains("prompt-hits") ? "" : n.textContent;
    }).join("");
  }

  // Sorting: click a header (or Enter/Space on it); a second click reverses the order. The
  // heading says the order ("newest first", "by cost, highest first"), a printed page too
  // (its headers print without their arrows).
  var keys = new Map(), note = $("#sort-note");
  function key(row, col, numeric) {
    var cached = keys.get(row) || {};
    keys.set(row, cached);
    if (col in cached) return cached[col];
    var cell = row.cells[col], value = numeric ? 0 : "";
    if (cell && numeric) { value = parseFloat(cell.getAttribute("data-sort")); if (isNaN(value)) value = 0; }
    else if (cell) value = ownText(cell).trim().toLowerCase();
    return (cached[col] = value);
  }
  function sortBy(col, dir) {
    var numeric = heads[col].getAttribute("data-type") === "num";
    var keyed = rows.map(function (r, i) { return [key(r, col, numeric), i, r]; });
    keyed.sort(function (a, b) {
      var c = numeric ? a[0] - b[0] : a[0].localeCompare(b[0]);
      return (dir === "ascending" ? c : -c) || a[1] - b[1];
    });
    rows = keyed.map(function (k) { return k[2]; });
    var frag = doc.createDocumentFragment();
    rows.forEach(function (r) { frag.appendChild(r); });
    body.appendChild(frag);
    heads.forEach(function (h, i) {
      if (i === col) h.setAttribute("aria-sort", dir); else h.removeAttribute("aria-sort");
    });
    if (note) note.textContent = "(" + orderWords(col, dir, numeric) + ")";
  }
  function orderWords(col, dir, numeric) {
    var up = dir === "ascending";
    if (col === 0) return up ? "oldest first" : "newest first";
    var name = heads[col].textContent.trim().toLowerCase();
    return "by " + name + ", " + (numeric ? (up ? "lowest first" : "highest first") : (up ? "A to Z" : "Z to A"));
  }
  heads.forEach(function (th, col) {
    var button = doc.createElement("button");
    button.type = "button"; button.className = "sort";
    button.textContent = th.textContent;
    button.title = "Sort by " + th.textContent.toLowerCase();
    th.textContent = ""; th.appendChild(button);
    button.addEventListener("click", function () {
      var current = th.getAttribute("aria-sort");
      var numeric = th.getAttribute("data-type") === "num";
      var dir = current ? (current === "ascending" ? "descending" : "ascending") : (numeric ? "descending" : "ascending");
      sortBy(col, dir);
      listingState.set("sort", [col, dir]);
    });
  });
  // Without this script the headers are plain text: the caption says they sort once they do.
  if (table.caption) table.caption.textContent += " (the column headers sort them)";
  // Back to this page: the order the reader chose, before anything is found in the rows.
  var chosen = listingState.get("sort");
  if (Array.isArray(chosen) && typeof chosen[0] === "number" && heads[chosen[0]] &&
      (chosen[1] === "ascending" || chosen[1] === "descending")) sortBy(chosen[0], chosen[1]);

  // Filter: every whitespace-separated word must occur in the row's text or in one of its
  // session's prompts (AND), not all in one place: "alpha tango" finds the ~/alpha session
  // whose second prompt says "tango".
  var input = $("#filter"), status = $("#filter-status"), texts = null, printedFilter = null;
  var sayCount = sayOncePaused(status, $("#filter-said"));
  // Sessions that could not be read are rows too, but not sessions with a cost.
  var readable = rows.filter(function (r) { return !r.classList.contains("failed"); }).length;
  // Prompts: every prompt typed in each session (the index embeds them, each to its first
  // line's worth; beside them the other words of a long one, and the words of prompts past
  // the ones listed), so a session is found by what was asked in it; its matching prompts
  // link to their entries. Both are JSON, gzip-compressed and base64-encoded; unpacked
  // once, at the first search (a browser without DecompressionStream filters by the rows alone).
  var promptIndex = null, unpacking = null;
  // One embedded JSON (gzip, base64) as parsed; null when absent or unreadable.
  function unpacked(id) {
    var data = $("#" + id);
    if (!data) return Promise.resolve(null);
    return Promise.resolve().then(function () {
      var bin = atob(data.textContent.trim()), bytes = new Uint8Array(bin.length);
      for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      return new Response(stream).text();
    }).then(JSON.parse).catch(function () { return null; });
  }
  function unpackPrompts() {
    if (unpacking) return unpacking;
    if (!window.DecompressionStream) { promptIndex = []; return (unpacking = Promise.resolve()); }
    // each session: [page, [[anchor, text]...]] (#prompt-index), and (#prompt-words) the words
    // of its long prompts after their shown start, [[prompt number, words]...], and the words
    // of its prompts past the listed ones, or nothing
    unpacking = Promise.all([unpacked("prompt-index"), unpacked("prompt-words")]).then(function (both) {
      var words = Array.isArray(both[1]) ? both[1] : [];
      promptIndex = (Array.isArray(both[0]) ? both[0] : []).map(function (item, n) {
        if (!Array.isArray(item)) item = [];
        var extra = Array.isArray(words[n]) ? words[n] : [], rest = Object.create(null);
        (Array.isArray(extra[0]) ? extra[0] : []).forEach(function (more) {
          if (Array.isArray(more) && typeof more[1] === "string") rest[more[0]] = more[1];
        });
        return {
          href: typeof item[0] === "string" ? item[0] : null,
          words: typeof extra[1] === "string" ? foldCase(composed(extra[1])) : "",
          prompts: (Array.isArray(item[1]) ? item[1] : []).map(function (p, i) {
            var text = composed(p && p[1]), more = composed(rest[i] || "");
            return { anchor: String(p && p[0]), text: text, lower: foldCase(text), rest: more, restLower: foldCase(more) };
          })
        };
      });
    }).catch(function () { promptIndex = []; });
    return unpacking;
  }
  function promptsOf(row) {
    return (promptIndex || [])[Number(row.getAttribute("data-i"))] || { href: null, words: "", prompts: [] };
  }
  function says(p, term) { return p.lower.indexOf(term) !== -1 || p.restLower.indexOf(term) !== -1; }
  function saysAll(p, terms) {
    for (var k = 0; k < terms.length; k++) if (!says(p, terms[k])) return false;
    return true;
  }
  // The prompts listed under a row the filter shows: those that say every word; else those
  // that say every word the row's own text lacks; else each that says one of those.
  function matchingPrompts(prompts, terms, lacking) {
    var hits = prompts.filter(function (p) { return saysAll(p, terms); });
    if (hits.length || !lacking.length) return hits;
    hits = prompts.filter(function (p) { return saysAll(p, lacking); });
    if (hits.length) return hits;
    return prompts.filter(function (p) { return lacking.some(function (t) { return says(p, t); }); });
  }
  // Where the words are in a folded text: [start, end] pairs in order, overlaps merged.
  function spans(lower, terms) {
    var found = [], merged = [];
    terms.forEach(function (t) {
      for (var at = lower.indexOf(t); at !== -1; at = lower.indexOf(t, at + t.length)) found.push([at, at + t.length]);
    });
    found.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
    found.forEach(function (r) {
      var last = merged[merged.length - 1];
      if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]); else merged.push(r);
    });
    return merged;
  }
  var SHOWN_HITS = 3, BEFORE = 60, AFTER = 100;
  function showHits(row, href, hits, terms) {
    var old = $(".prompt-hits", row);
    if (old) old.remove();
    if (!hits.length) return;
    var list = doc.createElement("ul");
    list.className = "prompt-hits";
    list.setAttribute("aria-label", "Prompts that match");
    hits.slice(0, SHOWN_HITS).forEach(function (p) {
      var item = doc.createElement("li"), target = item;
      if (href) {
        target = doc.createElement("a");
        target.href = href + "#" + encodeURIComponent(p.anchor);
        item.appendChild(target);
      }
      // a prompt in Hebrew or Arabic: its full stop at its end, the left (the words only:
      // on the item, its bullet went right, under the cell's clip)
      target.dir = "auto";
      // the shown words around the first word found, every word marked
      var marks = spans(p.lower, terms), first = marks[0] || [0, 0];
      var from = Math.max(0, first[0] - BEFORE), to = Math.min(p.text.length, first[1] + AFTER);
      if (from) target.appendChild(doc.createTextNode("…"));
      appendMarked(target, p.text, marks, from, to);
      if (to < p.text.length) target.appendChild(doc.createTextNode("…"));
      // a word said only further on in a long prompt: the word it is in, marked (once)
      var words = [];
      terms.forEach(function (t) {
        var at = p.lower.indexOf(t) === -1 ? p.restLower.indexOf(t) : -1;
        if (at === -1) return;
        var start = p.rest.lastIndexOf(" ", at) + 1, end = p.rest.indexOf(" ", at);
        if (end === -1) end = p.rest.length;
        if (words.indexOf(start) !== -1) return;
        words.push(start);
        target.appendChild(doc.createTextNode(" … "));
        appendMarked(target, p.rest, spans(p.restLower.slice(0, end), terms), start, end);
      });
      list.appendChild(item);
    });
    if (hits.length > SHOWN_HITS) {
      var more = doc.createElement("li");
      more.className = "muted";
      more.textContent = "and " + (hits.length - SHOWN_HITS) + " more prompt" + (hits.length - SHOWN_HITS === 1 ? "" : "s");
      list.appendChild(more);
    }
    row.cells[1].appendChild(list);
  }
  // A row's cost as the totals count it: a copied session's turns are counted in the session
  // they were copied from (data-counted), not twice.
  function countedCost(row) {
    var counted = row.getAttribute("data-counted");
    return parseFloat(counted !== null ? counted : row.cells[row.cells.length - 1].getAttribute("data-sort")) || 0;
  }
  // Returns the work still to do (the prompts unpacked first) as a promise, or nothing.
  function applyFilter() {
    var terms = foldCase(composed(input.value)).split(/\s+/).filter(Boolean);
    if (terms.length && promptIndex === null) return unpackPrompts().then(applyFilter);
    var typed = input.value.trim();
    if (printedFilter) printedFilter.textContent = terms.length ? "Filter: " + typed : "";
    if (!texts) texts = new Map(rows.map(function (r) { return [r, foldCase(composed(r.textContent))]; }));
    var shown = 0, cost = 0, prompts = 0, unreadable = 0;
    rows.forEach(function (r) {
      var text = texts.get(r), own = promptsOf(r), hits = [];
      var lacking = terms.filter(function (t) { return text.indexOf(t) === -1; });
      var hit = lacking.every(function (t) {
        return own.words.indexOf(t) !== -1 || own.prompts.some(function (p) { return says(p, t); });
      });
      if (hit && terms.length) hits = matchingPrompts(own.prompts, terms, lacking);
      showHits(r, own.href, hits, terms);
      prompts += hits.length;
      r.classList.toggle("filtered-out", !hit);
      if (hit && r.classList.contains("failed")) unreadable++;
      else if (hit) {
        shown++;
        cost += countedCost(r);
      }
    });
    // the rows of files that could not be read are counted apart: "0 of 32 sessions" was
    // said over three rows the filter found
    status.textContent = terms.length
      ? shown + " of " + readable + " sessions" + (shown ? " · " + costText(cost) : "") +
        (unreadable ? " · " + unreadable + " unreadable file" + (unreadable === 1 ? "" : "s") : "") +
        (prompts ? " · " + prompts + " matching prompt" + (prompts === 1 ? "" : "s") : "")
      : readable + " sessions";
    sayCount();
  }
  if (input) {
    input.hidden = false;
    // a printed page has no box: it says what was filtered beside the count
    printedFilter = doc.createElement("span");
    printedFilter.className = "printed-query";
    input.parentNode.insertBefore(printedFilter, input);
    var pending = 0;
    input.addEventListener("input", function () { clearTimeout(pending); pending = setTimeout(applyFilter, rows.length > 2000 ? 120 : 20); });
    input.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape") { input.value = ""; applyFilter(); }
    });
    // "/" finds, unless the reader turned single-key shortcuts off on a session page
    // (speech input or a stray key must not fire it; the setting is shared)
    doc.addEventListener("keydown", function (ev) {
      var tag = (ev.target.tagName || "").toLowerCase(), keysOff = false;
      try { keysOff = localStorage.getItem("pi-session-export:single-keys") === "off"; } catch (e) { /* ignore */ }
      if (ev.key === "/" && !keysOff && tag !== "input" && tag !== "textarea" && !ev.ctrlKey && !ev.metaKey && !ev.altKey) { ev.preventDefault(); input.focus(); }
    });
    if (input.value) listingState.restoring(applyFilter()); else status.textContent = readable + " sessions";
    // Back to this page: the browser may refill the box after this script ran.
    window.addEventListener("pageshow", function () { if (input.value) listingState.restoring(applyFilter()); });
  }
})();

/* Text search: the words every session said (prompts, replies, tool calls, the start and end
   of each tool's output), from the index the page embeds as JSON, gzip-compressed and
   base64-encoded (a file fetched beside the page is refused on file: URLs), unpacked at the
   first search. Every word must start a word in one entry (case-insensitive); the hits are grouped
   by session, each with the words marked in a short snippet, linking to its entry on the
   session's page. Session text is untrusted: it only ever goes into text nodes. Without
   this script (or DecompressionStream) the section stays hidden. */
(function () {
  "use strict";
  var doc = document;
  var section = doc.getElementById("text-search"), data = doc.getElementById("search-index");
  if (!section || !data || !window.DecompressionStream || !window.Response) return;
  var input = doc.getElementById("text-query"), status = doc.getElementById("text-status");
  var out = doc.getElementById("text-results");
  if (!input || !status || !out) return;
  var sayCount = sayOncePaused(status, doc.getElementById("text-said"));
  section.hidden = false;
  // a printed page has no box: it says what was searched beside the count
  var printedQuery = doc.createElement("span");
  printedQuery.className = "printed-query";
  input.parentNode.insertBefore(printedQuery, input);
  // The sessions whose list of matches the reader lengthened ("Show all 6 matches"), by page,
  // with how many each lists, for the words they were found by: put back with the search.
  var lengthened = {}, lengthenedFor = "", shownQuery = "";

  var NAMES = { p: "Prompt", r: "Reply", e: "Error", s: "Summary", c: "Tool call", o: "Tool output" };
  var SESSIONS_SHOWN = 50, HITS_SHOWN = 5, ALL_HITS = 300, BEFORE = 60, AFTER = 140;
  var index = null, unpacking = null, broken = false;

  function unpack() {
    if (unpacking) return unpacking;
    var bin = atob(data.textContent.trim()), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    unpacking = new Response(stream).text().then(function (text) {
      var parsed = JSON.parse(text), sessions = parsed && Array.isArray(parsed.sessions) ? parsed.sessions : [];
      // kept as parsed, [anchor, kind, text], each with its text folded to lower case beside
      // it (a site's index holds ~150,000: an object each made the first search twice as slow)
      index = [];
      sessions.forEach(function (s) {
        if (!Array.isArray(s) || typeof s[0] !== "string" || !Array.isArray(s[2])) return;
        var records = [];
        for (var i = 0; i < s[2].length; i++) {
          var r = s[2][i];
          if (Array.isArray(r) && typeof r[0] === "string" && typeof r[2] === "string") {
            r[3] = foldCase(r[2]);
            records.push(r);
          }
        }
        index.push({ href: s[0], title: String(s[1] || s[0]), records: records });
      });
    }).catch(function () { index = []; broken = true; });
    return unpacking;
  }

  function plural(n, one, many) { return n.toLocaleString("en-US") + " " + (n === 1 ? one : many || one + "s"); }

  // A word is found where it starts one: after a character that is no letter or digit of
  // a script that spaces its words (CJK text has no spaces: any place starts one), at a
  // camelCase hump, at an acronym's last capital ("OSError", "HTMLParser"), or between
  // letters and digits; "rate" is not found in "generate".
  var WORDY = /[a-z0-9\u00df-\u024f\u0370-\u03ff\u0400-\u04ff]/;
  function isCapital(c) { return c !== c.toLowerCase(); }
  function isSmall(c) { return c !== c.toUpperCase(); }
  function startsWord(text, lower, at) {
    if (at === 0 || !WORDY.test(lower.charAt(at - 1))) return true;
    var prev = text.charAt(at - 1), here = text.charAt(at), next = text.charAt(at + 1);
    return (isSmall(prev) && isCapital(here)) ||
      (isCapital(prev) && isCapital(here) && isSmall(next)) ||
      /[0-9]/.test(prev) !== /[0-9]/.test(here);
  }
  function wordAt(text, lower, term, from) {
    var at = lower.indexOf(term, from);
    while (at !== -1 && !startsWord(text, lower, at)) at = lower.indexOf(term, at + 1);
    return at;
  }
  // Where the words are in the text, in order, as [start, end] (overlaps merged); the
  // folded text's offsets are the text's (foldCase keeps every character in its place).
  function places(text, lower, terms) {
    var found = [], merged = [];
    terms.forEach(function (t) {
      for (var at = wordAt(text, lower, t, 0); at !== -1; at = wordAt(text, lower, t, at + t.length)) found.push([at, at + t.length]);
    });
    found.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
    found.forEach(function (r) {
      var last = merged[merged.length - 1];
      if (last && r[0] < last[1]) last[1] = Math.max(last[1], r[1]); else merged.push(r);
    });
    return merged;
  }

  // A snippet around the first word found, every word marked: text nodes and <mark>s only.
  function snippet(target, text, lower, terms) {
    var marks = places(text, lower, terms);
    var at = marks.length ? marks[0][0] : 0;
    var from = Math.max(0, at - BEFORE), to = Math.min(text.length, at + AFTER);
    // not in the middle of a word, when a space is near
    var space = text.lastIndexOf(" ", at - BEFORE + 15);
    if (from && space > from) from = space + 1;
    if (from) target.appendChild(doc.createTextNode("…"));
    appendMarked(target, text, marks, from, to);
    if (to < text.length) target.appendChild(doc.createTextNode("…"));
  }

  function hitItem(session, hit, terms) {
    var item = doc.createElement("li"), link = doc.createElement("a");
    link.href = session.href + "#" + encodeURIComponent(hit[0]);
    var kind = doc.createElement("span");
    kind.className = "kind";
    kind.textContent = NAMES[hit[1]] || "Text";
    link.appendChild(kind);
    link.appendChild(doc.createTextNode(" "));
    var words = doc.createElement("bdi"); // its own direction, not the "kind" word's
    snippet(words, hit[2], hit[3], terms);
    link.appendChild(words);
    item.appendChild(link);
    return item;
  }

  // The session's matches from the `shown` already listed up to `upTo`, then a button for
  // the next ones: 300 at first, 300 more at each press, till all are listed (it offered
  // the same 300 again, so matches past the 300th could not be reached).
  function fillHits(list, session, hits, terms, shown, upTo) {
    var old = list.querySelector("li.more");
    if (old) old.remove();
    for (var i = shown; i < upTo; i++) list.appendChild(hitItem(session, hits[i], terms));
    if (hits.length <= upTo) return;
    var more = doc.createElement("li"), button = doc.createElement("button");
    more.className = "more";
    button.type = "button";
    var next = Math.min(hits.length, upTo < ALL_HITS ? ALL_HITS : upTo + ALL_HITS);
    button.textContent = next === hits.length
      ? "Show all " + plural(hits.length, "match", "matches") + " in this session"
      : "Show " + next.toLocaleString("en-US") + " of the " + plural(hits.length, "match", "matches") + " in this session";
    button.addEventListener("click", function () {
      fillHits(list, session, hits, terms, upTo, next);
      lengthened[session.href] = next;
      listingState.set("text", { query: shownQuery, shown: lengthened });
      // the button is gone: the first match it added takes the focus
      var focus = list.children[upTo] && list.children[upTo].querySelector("a");
      if (focus) focus.focus();
    });
    more.appendChild(button);
    list.appendChild(more);
  }

  // Where and when each session ran, as its row in the session table says (its project and
  // last activity, in the table's local time): two sessions of one title in two projects
  // were two results headed alike ("Sampler session · 1 match").
  var facts = null;
  function factsOf(href) {
    if (!facts) {
      facts = new Map();
      Array.prototype.forEach.call(doc.querySelectorAll("#session-table tbody tr"), function (row) {
        var link = row.cells[1] && row.cells[1].querySelector(":scope > a");
        if (!link) return;
        var project = row.querySelector("td.project"), when = row.cells[0].querySelector("time");
        facts.set(link.getAttribute("href"), [project, when].map(function (cell) {
          return cell ? cell.textContent.trim() : "";
        }).filter(Boolean));
      });
    }
    return facts.get(href) || [];
  }

  function render(found, terms) {
    var frag = doc.createDocumentFragment();
    found.slice(0, SESSIONS_SHOWN).forEach(function (f) {
      var block = doc.createElement("section"), head = doc.createElement("h3"), link = doc.createElement("a");
      block.className = "text-hits";
      link.href = f.session.href;
      link.textContent = f.session.title;
      link.dir = "auto";
      head.appendChild(link);
      var said = factsOf(f.session.href);
      if (said.length) {
        var where = doc.createElement("span");
        where.className = "where muted";
        where.textContent = " · " + said.join(" · ");
        head.appendChild(where);
      }
      var count = doc.createElement("span");
      count.className = "muted";
      count.textContent = " · " + plural(f.hits.length, "match", "matches");
      head.appendChild(count);
      block.appendChild(head);
      var list = doc.createElement("ul"), listed = Number(lengthened[f.session.href]) || 0;
      fillHits(list, f.session, f.hits, terms, 0, Math.min(f.hits.length, Math.max(HITS_SHOWN, listed)));
      block.appendChild(list);
      frag.appendChild(block);
    });
    if (found.length > SESSIONS_SHOWN) {
      var rest = doc.createElement("p");
      rest.className = "muted";
      rest.textContent = "and " + plural(found.length - SESSIONS_SHOWN, "more session") + ": add a word to narrow the search.";
      frag.appendChild(rest);
    }
    out.textContent = "";
    out.appendChild(frag);
  }

  // Returns the work still to do (the index unpacked first) as a promise, or nothing.
  function search() {
    var work = find();
    sayCount();
    return work;
  }
  function wordsOf(query) { return foldCase(composed(query)).split(/\s+/).filter(Boolean); }
  function find() {
    var terms = wordsOf(input.value);
    if (terms.join(" ") !== lengthenedFor) { lengthened = {}; lengthenedFor = terms.join(" "); }
    shownQuery = input.value;
    listingState.set("text", terms.length ? { query: shownQuery, shown: lengthened } : null);
    section.classList.toggle("searched", terms.length > 0);
    printedQuery.textContent = terms.length ? "Searched for: " + input.value.trim() : "";
    if (!terms.length) { out.textContent = ""; status.textContent = ""; return; }
    if (index === null) {
      status.textContent = "Reading the index…";
      return unpack().then(search);
    }
    if (broken) { out.textContent = ""; status.textContent = "The search index could not be read."; return; }
    var found = [], total = 0;
    index.forEach(function (session) {
      var hits = session.records.filter(function (r) {
        for (var k = 0; k < terms.length; k++) if (wordAt(r[2], r[3], terms[k], 0) === -1) return false;
        return true;
      });
      if (hits.length) { found.push({ session: session, hits: hits }); total += hits.length; }
    });
    render(found, terms);
    status.textContent = total
      ? plural(total, "match", "matches") + " in " + plural(found.length, "session")
      : "No matches";
  }

  var pending = 0;
  input.addEventListener("input", function () { clearTimeout(pending); pending = setTimeout(search, 150); });
  input.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape") { input.value = ""; search(); }
    if (ev.key === "Enter") { clearTimeout(pending); search(); }
  });
  // Back to this page: the words searched and the matches listed, as the reader left them
  // (the box is not refilled by the browser: autocomplete="off" keeps its list of past
  // entries from covering the results).
  var kept = listingState.get("text");
  if (!input.value && kept && typeof kept.query === "string") {
    input.value = kept.query;
    lengthenedFor = wordsOf(kept.query).join(" ");
    if (kept.shown && typeof kept.shown === "object") lengthened = kept.shown;
  }
  if (input.value) listingState.restoring(search());
})();
