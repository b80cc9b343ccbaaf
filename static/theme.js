/* pi-session-export: the theme, shared by the session pages and the site index (inlined
   before each page's own script). A stored choice wins over the system setting; the toggle
   flips the effective theme and remembers it. */
(function () {
  "use strict";
  var root = document.documentElement, THEME_KEY = "pi-session-export:theme";
  try {
    var stored = localStorage.getItem(THEME_KEY);
    if (stored === "light" || stored === "dark") root.setAttribute("data-theme", stored);
  } catch (e) { /* storage may be blocked (file://, sandboxed iframe) */ }
  function effectiveTheme() {
    var t = root.getAttribute("data-theme");
    if (t) return t;
    return window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }
  var button = document.getElementById("theme-toggle");
  if (!button) return;
  function label() { button.textContent = effectiveTheme() === "dark" ? "☀ Light" : "☾ Dark"; }
  button.hidden = false; label();
  button.addEventListener("click", function () {
    var next = effectiveTheme() === "dark" ? "light" : "dark";
    root.setAttribute("data-theme", next);
    try { localStorage.setItem(THEME_KEY, next); } catch (e) { /* ignore */ }
    label();
  });
})();
