/* pi-session-export: the theme toggle, shared by the session pages and the site index
   (inlined before each page's own script). A stored choice wins over the system setting;
   the toggle flips the effective theme and remembers it. */
(function () {
  "use strict";
  // a stored choice was applied by theme-head.js, in <head>
  var root = document.documentElement, THEME_KEY = "pi-session-export:theme";
  function effectiveTheme() {
    var t = root.getAttribute("data-theme");
    if (t) return t;
    return window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }
  var button = document.getElementById("theme-toggle");
  if (!button) return;
  // the button names what it does; its symbol is not read out
  function label() {
    var next = effectiveTheme() === "dark" ? "light" : "dark", sign = document.createElement("span");
    sign.setAttribute("aria-hidden", "true"); sign.textContent = next === "dark" ? "☾ " : "☀ ";
    button.replaceChildren(sign, next === "dark" ? "Dark" : "Light");
    button.setAttribute("aria-label", "Switch to the " + next + " theme");
  }
  button.hidden = false; label();
  // the system theme can change while the page is open: the label names the other one
  var system = window.matchMedia && matchMedia("(prefers-color-scheme: dark)");
  if (system && system.addEventListener) system.addEventListener("change", label);
  button.addEventListener("click", function () {
    var next = effectiveTheme() === "dark" ? "light" : "dark";
    root.setAttribute("data-theme", next);
    try { localStorage.setItem(THEME_KEY, next); } catch (e) { /* ignore */ }
    label();
  });
})();
