// Sets the color theme before the first paint (no flash of the wrong theme). An external file,
// not an inline script: the pages' Content-Security-Policy allows only the app's own scripts.
(() => {
  let choice = "system";
  try {
    choice = localStorage.getItem("parley.theme") || "system";
  } catch {}
  const dark =
    choice === "dark" ||
    (choice === "system" && matchMedia("(prefers-color-scheme: dark)").matches);
  document.documentElement.classList.toggle("dark", dark);
})();
