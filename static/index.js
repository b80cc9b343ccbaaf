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
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " +
      pad(d.getHours()) + ":" + pad(d.getMinutes());
  }
  function utcOffset(d) {
    var minutes = -d.getTimezoneOffset(), sign = minutes < 0 ? "−" : "+";
    if (!minutes) return "UTC";  // not "UTC+00:00"
    minutes = Math.abs(minutes);
    return "UTC" + sign + pad(Math.floor(minutes / 60)) + ":" + pad(minutes % 60);
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

  // Sorting: click a header (or Enter/Space on it); a second click reverses the order.
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
    if (note) note.hidden = !(col === 0 && dir === "descending");
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
    });
  });

  // Filter: every whitespace-separated term must occur in the row's text (AND).
  var input = $("#filter"), status = $("#filter-status"), texts = null;
  var sayCount = sayOncePaused(status, $("#filter-said"));
  // Sessions that could not be read are rows too, but not sessions with a cost.
  var readable = rows.filter(function (r) { return !r.classList.contains("failed"); }).length;
  function money(v) {  // as the page writes costs: 4 decimals under a cent, 3 under a dollar
    var places = v && Math.abs(v) < 0.01 ? 4 : v && Math.abs(v) < 1 ? 3 : 2;
    return "$" + v.toLocaleString("en-US", { minimumFractionDigits: places, maximumFractionDigits: places });
  }
  // Prompts: every prompt typed in each session (the index embeds them, cut to a line), so
  // a session is found by what was asked in it; its matching prompts link to their entries.
  // The index is JSON, gzip-compressed and base64-encoded; unpacked once, at the first search
  // (a browser without DecompressionStream filters by the rows alone).
  var promptIndex = null, unpacking = null;
  function unpackPrompts() {
    if (unpacking) return unpacking;
    var data = $("#prompt-index");
    if (!data || !window.DecompressionStream) { promptIndex = []; return (unpacking = Promise.resolve()); }
    var bin = atob(data.textContent.trim()), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    unpacking = new Response(stream).text().then(function (text) {
      promptIndex = JSON.parse(text).map(function (item) {
        var prompts = Array.isArray(item) && Array.isArray(item[1]) ? item[1] : [];
        return { href: Array.isArray(item) ? item[0] : null, prompts: prompts.map(function (p) {
          return { anchor: String(p[0]), text: String(p[1]), lower: String(p[1]).toLowerCase() };
        }) };
      });
    }).catch(function () { promptIndex = []; });
    return unpacking;
  }
  function promptsOf(row) {
    return (promptIndex || [])[Number(row.getAttribute("data-i"))] || { href: null, prompts: [] };
  }
  var SHOWN_HITS = 3;
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
      // found in the text itself (lower-casing may change a string's length: "İ")
      var found = new RegExp(terms[0].replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i").exec(p.text);
      var at = found ? found.index : 0, size = found ? found[0].length : 0;
      var from = Math.max(0, at - 60), piece = p.text.slice(from, at + size + 100);
      if (from) target.appendChild(doc.createTextNode("…"));
      var mark = doc.createElement("mark");
      mark.textContent = piece.slice(at - from, at - from + size);
      target.appendChild(doc.createTextNode(piece.slice(0, at - from)));
      target.appendChild(mark);
      target.appendChild(doc.createTextNode(piece.slice(at - from + size)));
      if (from + piece.length < p.text.length) target.appendChild(doc.createTextNode("…"));
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
  function applyFilter() {
    var terms = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    if (terms.length && promptIndex === null) { unpackPrompts().then(applyFilter); return; }
    if (!texts) texts = new Map(rows.map(function (r) { return [r, r.textContent.toLowerCase()]; }));
    var shown = 0, cost = 0, prompts = 0;
    rows.forEach(function (r) {
      var text = texts.get(r), hit = true, hits = [];
      for (var j = 0; j < terms.length && hit; j++) hit = text.indexOf(terms[j]) !== -1;
      if (terms.length) {
        var own = promptsOf(r);
        hits = own.prompts.filter(function (p) {
          for (var k = 0; k < terms.length; k++) if (p.lower.indexOf(terms[k]) === -1) return false;
          return true;
        });
        showHits(r, own.href, hits, terms);
        prompts += hits.length;
        hit = hit || hits.length > 0;
      } else {
        showHits(r, null, [], terms);
      }
      r.classList.toggle("filtered-out", !hit);
      if (hit && !r.classList.contains("failed")) {
        shown++;
        cost += parseFloat(r.cells[r.cells.length - 1].getAttribute("data-sort")) || 0;
      }
    });
    status.textContent = terms.length
      ? shown + " of " + readable + " sessions · " + money(cost) +
        (prompts ? " · " + prompts + " matching prompt" + (prompts === 1 ? "" : "s") : "")
      : readable + " sessions";
    sayCount();
  }
  if (input) {
    input.hidden = false;
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
    if (input.value) applyFilter(); else status.textContent = readable + " sessions";
    // Back to this page: the browser may refill the box after this script ran.
    window.addEventListener("pageshow", function () { if (input.value) applyFilter(); });
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
      // kept as parsed, [anchor, kind, text], each with its text lower-cased beside it (a
      // site's index holds ~150,000: an object each made the first search twice as slow)
      index = [];
      sessions.forEach(function (s) {
        if (!Array.isArray(s) || typeof s[0] !== "string" || !Array.isArray(s[2])) return;
        var records = [];
        for (var i = 0; i < s[2].length; i++) {
          var r = s[2][i];
          if (Array.isArray(r) && typeof r[0] === "string" && typeof r[2] === "string") {
            r[3] = r[2].toLowerCase();
            records.push(r);
          }
        }
        index.push({ href: s[0], title: String(s[1] || s[0]), records: records });
      });
    }).catch(function () { index = []; broken = true; });
    return unpacking;
  }

  function escaped(term) { return term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }
  function plural(n, one, many) { return n.toLocaleString("en-US") + " " + (n === 1 ? one : many || one + "s"); }

  // A word is found where it starts one: after a character that is no letter or digit of
  // a script that spaces its words (CJK text has no spaces: any place starts one), at a
  // camelCase hump, or between letters and digits; "rate" is not found in "generate".
  var WORDY = /[a-z0-9\u00df-\u024f\u0370-\u03ff\u0400-\u04ff]/;
  function startsWord(text, lower, at) {
    if (at === 0 || !WORDY.test(lower.charAt(at - 1))) return true;
    if (text.length !== lower.length) return false;  // lower-casing moved the letters ("İ")
    var prev = text.charAt(at - 1), here = text.charAt(at);
    return (prev !== prev.toUpperCase() && here !== here.toLowerCase()) ||
      /[0-9]/.test(prev) !== /[0-9]/.test(here);
  }
  function wordAt(text, lower, term, from) {
    var at = lower.indexOf(term, from);
    while (at !== -1 && !startsWord(text, lower, at)) at = lower.indexOf(term, at + 1);
    return at;
  }
  // Where the words are in the text, in order, as [start, end] (overlaps merged).
  function places(text, lower, terms) {
    var found = [], merged = [];
    if (text.length === lower.length) {
      terms.forEach(function (t) {
        for (var at = wordAt(text, lower, t, 0); at !== -1; at = wordAt(text, lower, t, at + t.length)) found.push([at, at + t.length]);
      });
    } else {  // offsets of the lower-cased text are not the text's: its own match, any case
      var re = new RegExp(terms.map(escaped).join("|"), "gi"), m;
      while ((m = re.exec(text)) !== null) {
        if (!m[0].length) { re.lastIndex++; continue; }
        found.push([m.index, m.index + m[0].length]);
      }
    }
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
    var last = from;
    marks.forEach(function (r) {
      var start = Math.max(r[0], last), end = Math.min(r[1], to);
      if (end <= start) return;
      target.appendChild(doc.createTextNode(text.slice(last, start)));
      var mark = doc.createElement("mark");
      mark.textContent = text.slice(start, end);
      target.appendChild(mark);
      last = end;
    });
    target.appendChild(doc.createTextNode(text.slice(last, to)));
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
    snippet(link, hit[2], hit[3], terms);
    item.appendChild(link);
    return item;
  }

  function fillHits(list, session, hits, terms, limit) {
    list.textContent = "";
    hits.slice(0, limit).forEach(function (hit) { list.appendChild(hitItem(session, hit, terms)); });
    if (hits.length > limit) {
      var more = doc.createElement("li"), button = doc.createElement("button");
      more.className = "more";
      button.type = "button";
      var next = Math.min(hits.length, ALL_HITS);
      button.textContent = next === hits.length
        ? "Show all " + plural(hits.length, "match", "matches") + " in this session"
        : "Show " + next + " of the " + plural(hits.length, "match", "matches") + " in this session";
      button.addEventListener("click", function () {
        var shown = limit;
        fillHits(list, session, hits, terms, next);
        var focus = list.children[shown] && list.children[shown].querySelector("a");
        if (focus) focus.focus();
      });
      more.appendChild(button);
      list.appendChild(more);
    }
  }

  function render(found, terms) {
    var frag = doc.createDocumentFragment();
    found.slice(0, SESSIONS_SHOWN).forEach(function (f) {
      var block = doc.createElement("section"), head = doc.createElement("h3"), link = doc.createElement("a");
      block.className = "text-hits";
      link.href = f.session.href;
      link.textContent = f.session.title;
      head.appendChild(link);
      var count = doc.createElement("span");
      count.className = "muted";
      count.textContent = " · " + plural(f.hits.length, "match", "matches");
      head.appendChild(count);
      block.appendChild(head);
      var list = doc.createElement("ul");
      fillHits(list, f.session, f.hits, terms, HITS_SHOWN);
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

  function search() {
    find();
    sayCount();
  }
  function find() {
    var terms = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    if (!terms.length) { out.textContent = ""; status.textContent = ""; return; }
    if (index === null) {
      status.textContent = "Reading the index…";
      unpack().then(search);
      return;
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
  if (input.value) search();
  // Back to this page: the browser may refill the box after this script ran.
  window.addEventListener("pageshow", function () { if (input.value) search(); });
})();
