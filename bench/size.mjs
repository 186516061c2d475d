// Sizes (issues 7, 8 and 13): the Worker bundle as `wrangler deploy --dry-run` builds it, the web
// app's initial JavaScript (what index.html loads before any route chunk) and the chat package's
// initial JavaScript (packages/chat-ui/scripts/measure.mjs) and the embeds' initial and first-open
// JavaScript (packages/embed/scripts/measure.mjs), all gzip.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { measureChatUi } from "../packages/chat-ui/scripts/measure.mjs";
import { measureEmbedReact, measureEmbedScript } from "../packages/embed/scripts/measure.mjs";
import { wranglerRun } from "./lib.mjs";

const root = path.resolve(import.meta.dirname, "..");
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
/** Issue 13 states its web budgets in KB: 1,000 bytes. */
const kb = (bytes) => `${(bytes / 1000).toFixed(1)} KB`;
const APP_SHELL_BUDGET = 120_000;
const CHAT_UI_BUDGET = 60_000;
const EMBED_BUDGET = 60_000;

/**
 * The JavaScript files index.html makes the browser fetch before any route chunk: every
 * `<script src>` (the module entry and classic scripts such as /boot.js) and every
 * `<link rel="modulepreload" href>`, in document order, without repeats.
 */
export function initialScripts(html) {
  const files = [];
  for (const [tag] of html.matchAll(/<(?:script|link)\b[^>]*>/gi)) {
    const attr = (name) => new RegExp(`\\b${name}\\s*=\\s*["']([^"']+)["']`, "i").exec(tag)?.[1];
    const file = tag.toLowerCase().startsWith("<script")
      ? attr("src")
      : attr("rel")?.toLowerCase() === "modulepreload"
        ? attr("href")
        : undefined;
    if (file && !/^[a-z]+:\/\//i.test(file) && !files.includes(file)) files.push(file);
  }
  return files;
}

export async function benchSize() {
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
    const initial = initialScripts(html).map((file) => ({
      file,
      gzip: gzipSync(readFileSync(path.join(dist, file))).byteLength,
    }));
    const web = initial.reduce((sum, { gzip }) => sum + gzip, 0);
    const all = readdirSync(path.join(dist, "assets"))
      .filter((f) => f.endsWith(".js"))
      .reduce((sum, f) => sum + gzipSync(readFileSync(path.join(dist, "assets", f))).byteLength, 0);

    // The API reference page (/api-reference): a build of its own under assets/reference/.
    const referenceHtml = readFileSync(path.join(dist, "api-reference.html"), "utf8");
    const referenceInitial = initialScripts(referenceHtml).reduce(
      (sum, file) => sum + gzipSync(readFileSync(path.join(dist, file))).byteLength,
      0,
    );
    const referenceAll = readdirSync(path.join(dist, "assets/reference"))
      .filter((f) => f.endsWith(".js"))
      .reduce(
        (sum, f) => sum + gzipSync(readFileSync(path.join(dist, "assets/reference", f))).byteLength,
        0,
      );

    const chat = await measureChatUi();
    const embed = await measureEmbedScript();
    const embedReact = await measureEmbedReact();
    const embedMet = (bytes) =>
      `${bytes <= EMBED_BUDGET ? "met" : "MISSED"} (<= ${kb(EMBED_BUDGET)})`;
    const chatInitial = chat.chunks.filter((c) => c.loaded === "initial");
    const largest = (list, name, size, n = 4) =>
      [...list]
        .sort((a, b) => b[size] - a[size])
        .slice(0, n)
        .map((item) => `${path.basename(item[name])} ${kb(item[size])}`)
        .join(", ");

    return [
      "## Size (issues 7, 8 and 13)",
      "",
      "gzip of the built files (KiB = 1,024 bytes for the Worker as in issues 7 and 8, KB = 1,000 bytes for",
      "issue 13's web budgets). App shell: every `<script src>` and `<link rel=modulepreload>` of",
      "apps/web/dist/index.html (default gzip level). Chat package: packages/chat-ui/scripts/measure.mjs, a",
      "Vite lib build of @parley/chat-ui with react, react-dom, ai, agents, @cloudflare/ai-chat and",
      "@ai-sdk/react external, entry chunk plus its static imports (gzip level 9, as its `pnpm size` does).",
      "Embeds: packages/embed/scripts/measure.mjs, each package's own vite build (gzip level 9): initial is the",
      "entry and its static imports, first open adds the lazy panel chunk (sessions, chat-ui's views and",
      "light chat client), then the light markdown renderer; each is held to the 60 KB budget.",
      "",
      "| what | gzip | target |",
      "| --- | --- | --- |",
      `| Worker bundle (\`wrangler deploy --dry-run\`) | ${kib(worker)} | ${worker <= 1.5 * 1024 * 1024 ? "met" : "MISSED"} (<= 1,536 KiB) |`,
      `| web app shell, initial JS (${initial.length} file${initial.length === 1 ? "" : "s"} from index.html) | ${kb(web)} | ${web <= APP_SHELL_BUDGET ? "met" : "MISSED"} (<= ${kb(APP_SHELL_BUDGET)}) |`,
      `| web app, all JS chunks (split by route) | ${kb(all)} | - |`,
      `| API reference page (/api-reference, Scalar), initial JS | ${kb(referenceInitial)} | - (not in the shell) |`,
      `| API reference page, all JS chunks (grammars lazy) | ${kb(referenceAll)} | - |`,
      `| chat package (@parley/chat-ui), initial JS (${chatInitial.length} chunk${chatInitial.length === 1 ? "" : "s"}) | ${kb(chat.initialBytes)} | ${chat.initialBytes <= CHAT_UI_BUDGET ? "met" : "MISSED"} (<= ${kb(CHAT_UI_BUDGET)}) |`,
      `| chat package, all chunks (${chat.chunks.length}, the rest lazy: highlighter, grammars) | ${kb(chat.allBytes)} | - |`,
      `| embed script (\`<parley-assistant>\`, Preact), initial JS | ${kb(embed.initialBytes)} | ${embed.initialBytes <= EMBED_BUDGET ? "met" : "MISSED"} (<= ${kb(EMBED_BUDGET)}) |`,
      `| embed script, first open (+ sessions and chat chunk) | ${kb(embed.firstOpenBytes)} | ${embedMet(embed.firstOpenBytes)} |`,
      `| embed script, + markdown renderer (after the chat shows) | ${kb(embed.markdownBytes)} | ${embedMet(embed.markdownBytes)} |`,
      `| @parley/react (host's React excluded), initial JS | ${kb(embedReact.initialBytes)} | ${embedReact.initialBytes <= EMBED_BUDGET ? "met" : "MISSED"} (<= ${kb(EMBED_BUDGET)}) |`,
      `| @parley/react, first open | ${kb(embedReact.firstOpenBytes)} | ${embedMet(embedReact.firstOpenBytes)} |`,
      `| @parley/react, + markdown renderer | ${kb(embedReact.markdownBytes)} | ${embedMet(embedReact.markdownBytes)} |`,
      "",
      `Largest app-shell files: ${largest(initial, "file", "gzip")}. Largest chat-package initial chunks: ${largest(chatInitial, "chunk", "gzipBytes")}.`,
    ].join("\n");
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
