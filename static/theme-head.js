/* pi-session-export: the reader's stored theme, applied in <head> before the first paint
   (from the end of the page it came after a frame in the other theme). theme.js adds the
   toggle. */
(function () {
  document.documentElement.classList.add("js");  /* styles that assume a script can tell */
  try {
    var stored = localStorage.getItem("pi-session-export:theme");
    if (stored === "light" || stored === "dark") document.documentElement.setAttribute("data-theme", stored);
  } catch (e) { /* storage may be blocked (file://, sandboxed iframe) */ }
})();
