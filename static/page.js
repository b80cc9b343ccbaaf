/* pi-session-export: progressive enhancement only. The page is complete without this script;
   it adds local times, search, keyboard shortcuts, deep links, copy links and the JSONL
   download (the theme toggle is theme.js). No network access (the page's CSP forbids it anyway). */
(function () {
  "use strict";
  var doc = document;

  function $(sel, el) { return (el || doc).querySelector(sel); }
  function $all(sel, el) { return Array.prototype.slice.call((el || doc).querySelectorAll(sel)); }
  function show(el) { if (el) el.hidden = false; }

  // Local times (the server wrote UTC). Formatted by hand: Intl costs ~50 ms at start-up.
  function pad(n) { return n < 10 ? "0" + n : "" + n; }
  function localTime(d) {
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " +
      pad(d.getHours()) + ":" + pad(d.getMinutes());
  }
  $all("time[datetime]").forEach(function (t) {
    var d = new Date(t.getAttribute("datetime"));
    if (!isNaN(d)) { t.title = t.getAttribute("datetime") + " (UTC)"; t.textContent = localTime(d); }
  });

  // Toggles for thinking and tool output (also keys t / o).
  function toggleAll(selector) {
    var items = $all(selector);
    var open = items.some(function (d) { return !d.open; });
    items.forEach(function (d) { d.open = open; });
  }
  var toggles = { "toggle-thinking": "details.thinking", "toggle-tools": ".tool details.fold, details.skill, details.summary-block" };
  Object.keys(toggles).forEach(function (id) {
    var b = $("#" + id);
    show(b);
    b.addEventListener("click", function () { toggleAll(toggles[id]); });
  });

  // Search over the tree outline: every whitespace-separated term must match (AND).
  var search = $("#tree-search"), status = $("#tree-status"), statusText = status ? status.textContent : "";
  var rows = $all("#tree li:not(.sub)"), texts = null;
  show(search);
  function runSearch() {
    var terms = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    if (!texts) texts = rows.map(function (r) { return r.textContent.toLowerCase(); });
    var shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var hit = true;
      for (var j = 0; j < terms.length && hit; j++) hit = texts[i].indexOf(terms[j]) !== -1;
      rows[i].classList.toggle("search-miss", !hit);
      if (hit) shown++;
    }
    status.textContent = terms.length ? shown + " / " + rows.length + " entries match" : statusText;
  }
  var pending = 0;
  search.addEventListener("input", function () { clearTimeout(pending); pending = setTimeout(runSearch, rows.length > 3000 ? 120 : 30); });
  search.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter") {
      var first = rows.filter(function (r) { return !r.classList.contains("search-miss") && r.offsetParent; })[0];
      if (first) { var a = $("a", first); if (a) a.click(); }
    }
  });

  // Deep links: #<entry id>, or Pi's ?targetId=<id>; open every enclosing <details>.
  function findTarget(id) {
    if (!id) return null;
    var el = doc.getElementById(id);
    if (!el && window.CSS && CSS.escape) el = $('[data-entry-id="' + CSS.escape(id) + '"]');
    return el;
  }
  var lastRow = null;
  function reveal(id, smooth) {
    var el = findTarget(id);
    if (!el) return false;
    for (var p = el.parentElement; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
    if (!el.getClientRects().length) {  // hidden by the current filter: show everything
      var all = doc.getElementById("flt-all");
      if (all) all.checked = true;
    }
    el.scrollIntoView({ block: "center", behavior: smooth ? "smooth" : "auto" });
    el.classList.add("highlight");
    setTimeout(function () { el.classList.remove("highlight"); }, 2000);
    var anchor = el.id, link = anchor && window.CSS && CSS.escape ? $('#tree a[href="#' + CSS.escape(anchor) + '"]') : null;
    var row = link ? link.parentElement : null;
    if (lastRow) lastRow.classList.remove("current");
    if (row) { row.classList.add("current"); lastRow = row; }
    return true;
  }
  function hashId() {
    var h = location.hash.slice(1);
    try { return decodeURIComponent(h); } catch (e) { return h; }
  }
  function fromLocation() {
    var hash = hashId();
    if (hash && reveal(hash, false)) return;
    var params = new URLSearchParams(location.search);
    var target = params.get("targetId");
    if (target) reveal(target, false);
  }
  window.addEventListener("hashchange", function () { reveal(hashId(), true); });
  // Following an outline link to the hash already in the address bar fires no hashchange.
  $("#tree").addEventListener("click", function (ev) {
    var a = ev.target.closest && ev.target.closest("a[href^='#']");
    if (a && a.getAttribute("href") === location.hash) reveal(hashId(), true);
  });
  fromLocation();

  // Copy link: clicking an entry's "#" copies its address too.
  doc.addEventListener("click", function (ev) {
    var a = ev.target.closest && ev.target.closest("a.permalink, a.ts");
    if (!a) return;
    var url = location.href.split("#")[0] + a.getAttribute("href");
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(url).catch(function () {});
    a.classList.add("copied"); setTimeout(function () { a.classList.remove("copied"); }, 1500);
  });

  // Keyboard: / search, t thinking, o tool output, Esc clears.
  doc.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var tag = (ev.target.tagName || "").toLowerCase();
    var typing = tag === "input" || tag === "textarea" || tag === "select" || ev.target.isContentEditable;
    if (ev.key === "Escape") {
      if (search.value) { search.value = ""; runSearch(); }
      if (typing) ev.target.blur();
      return;
    }
    if (typing) return;
    if (ev.key === "/") { ev.preventDefault(); search.focus(); }
    else if (ev.key === "t") toggleAll(toggles["toggle-thinking"]);
    else if (ev.key === "o") toggleAll(toggles["toggle-tools"]);
  });

  // Download JSONL: the page carries the session gzip-compressed; rebuild the file locally.
  var dl = $("#download-jsonl"), data = $("#session-jsonl");
  if (dl && data && window.DecompressionStream) {
    show(dl);
    dl.addEventListener("click", function () {
      var b64 = JSON.parse(data.textContent), bin = atob(b64), bytes = new Uint8Array(bin.length);
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
