import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

/** Where Debian's chromium package puts the browser; the only browser these tests use. */
export const CHROMIUM = "/usr/bin/chromium";

/**
 * Makes sure Debian's chromium is installed, installing it with apt-get when it is missing (the
 * machines cannot download Playwright's own browsers). A browser that cannot be installed fails
 * the run: an end-to-end test that silently skips proves nothing.
 */
export default function setup(): void {
  if (existsSync(CHROMIUM)) return;
  console.log(
    `[e2e] ${CHROMIUM} is missing: installing Debian's chromium with apt-get (about a minute)`,
  );
  const result = spawnSync("sh", ["-c", "apt-get update && apt-get install -y chromium"], {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  if (result.status !== 0 || !existsSync(CHROMIUM)) {
    throw new Error(
      `Could not install Chromium: \`apt-get update && apt-get install -y chromium\` ${
        result.error ? `failed to start (${result.error.message})` : `exited with ${result.status}`
      } and ${CHROMIUM} is still missing. The end-to-end tests need Debian's chromium; install it ` +
        "as root with that command and run them again.",
    );
  }
}
