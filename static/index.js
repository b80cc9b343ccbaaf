/* pi-session-export site index: progressive enhancement only. The table is complete and
   sorted by last activity without this script; it adds column sorting, a filter box that also
   searches the sessions' prompts, and local times (the theme toggle is theme.js). No network
   access (the page's CSP forbids it anyway). */
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
