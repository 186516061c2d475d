// Sizes (issues 7 and 8): the Worker bundle as `wrangler deploy --dry-run` builds it, and the web
// app's initial JavaScript (what index.html loads before any route chunk), both gzip.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { wranglerRun } from "./lib.mjs";

const root = path.resolve(import.meta.dirname, "..");
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;

export function benchSize() {
  const out = mkdtempSync(path.join(os.tmpdir(), "parley-size-"));
  try {
    wranglerRun([
      "deploy",
      "--dry-run",
      "--outdir",
      out,
      "--config",
      path.join(root, "wrangler.jsonc"),
    ]);
    const bundle = readdirSync(out).find((f) => f.endsWith(".js"));
    const worker = gzipSync(readFileSync(path.join(out, bundle ?? ""))).byteLength;

    const dist = path.join(root, "apps/web/dist");
    const html = readFileSync(path.join(dist, "index.html"), "utf8");
    const initial = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1]);
    const web = initial.reduce(
      (sum, file) => sum + gzipSync(readFileSync(path.join(dist, file))).byteLength,
      0,
    );
    const all = readdirSync(path.join(dist, "assets"))
      .filter((f) => f.endsWith(".js"))
      .reduce((sum, f) => sum + gzipSync(readFileSync(path.join(dist, "assets", f))).byteLength, 0);

    return [
      "## Size (issues 7 and 8)",
      "",
      "| what | gzip | target |",
      "| --- | --- | --- |",
      `| Worker bundle (\`wrangler deploy --dry-run\`) | ${kib(worker)} | ${worker <= 1.5 * 1024 * 1024 ? "met" : "MISSED"} (<= 1,536 KiB) |`,
      `| web app, initial JS (${initial.length} file${initial.length === 1 ? "" : "s"} from index.html) | ${kib(web)} | ${web <= 200 * 1024 ? "met" : "MISSED"} (<= 200 KiB) |`,
      `| web app, all JS chunks (split by route) | ${kib(all)} | - |`,
    ].join("\n");
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
