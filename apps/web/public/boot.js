// Runs before the first paint, ahead of the app's module scripts. An external file, not an inline
// script: the pages' Content-Security-Policy allows only the app's own scripts.
(() => {
  // The color theme, so the page never flashes the wrong one.
  let choice = "system";
  try {
    choice = localStorage.getItem("parley.theme") || "system";
  } catch {}
  const dark =
    choice === "dark" ||
    (choice === "system" && matchMedia("(prefers-color-scheme: dark)").matches);
  document.documentElement.classList.toggle("dark", dark);

  // A returning visitor's session: the refresh starts now, while the app's script downloads,
  // instead of after it has run. The app takes this response once (lib/api.ts, `refresh`); the
  // readable marker cookie says a refresh cookie may be there (a signed-out visit asks nothing).
  if (/(?:^|;\s*)parley_signed_in=1(?:;|$)/.test(document.cookie)) {
    window.__parleyEarlyRefresh = fetch("/api/auth/refresh", {
      method: "POST",
      credentials: "same-origin",
    });
    // Taken (and its failure handled) by the app; never an unhandled rejection before it loads.
    window.__parleyEarlyRefresh.catch(() => undefined);
  }
})();
