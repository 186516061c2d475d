// Measures what the embeds cost a host page, as they are built (gzip level 9, as chat-ui's
// measure.mjs): the script-tag build (vite.config.ts: Preact, everything bundled) and
// @parley/react (its vite.config.ts: the host's React external, everything else bundled).
//
// - initial: the entry chunk plus every chunk it imports statically (what a page loads before
//   anyone opens the assistant; the stylesheet is a string inside it).
// - first open: initial plus the panel's chunk and its static imports (sessions and the chat:
//   chat-ui's views and its light chat client). Loaded when the launcher is hovered, focused or opened, or
//   at once in inline mode.
// - markdown: the lazy markdown renderer (chat-ui's light-markdown.tsx in the embeds, in
//   streamdown's place) the chat fetches right after it mounts; replies show as plain text until
//   it is in. With it, what a page fetches to show a reply with markdown.
// Used by scripts/size.mjs (`pnpm size`) and by the repo's `pnpm bench size` (bench/size.mjs).
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "vite";

const packages = fileURLToPath(new URL("../..", import.meta.url));

const gzipBytes = (code) => gzipSync(code, { level: 9 }).length;

/** Builds one package with its own vite.config.ts, nothing written, and sums its chunk sets. */
async function measure(dir) {
  const root = path.join(packages, dir);
  const result = await build({
    root,
    configFile: path.join(root, "vite.config.ts"),
    logLevel: "silent",
    build: { write: false },
  });
  const outputs = (Array.isArray(result) ? result : [result]).flatMap((entry) => entry.output);
  const chunks = new Map(
    outputs.filter((item) => item.type === "chunk").map((chunk) => [chunk.fileName, chunk]),
  );
  const closure = (names, seen = new Set()) => {
    const visit = (name) => {
      if (seen.has(name)) return;
      seen.add(name);
      for (const imported of chunks.get(name)?.imports ?? [])
        if (chunks.has(imported)) visit(imported);
    };
    for (const name of names) visit(name);
    return seen;
  };
  const byModule = (part) =>
    [...chunks.values()]
      .filter((chunk) => Object.keys(chunk.modules).some((id) => id.includes(part)))
      .map((chunk) => chunk.fileName);
  const entry = [...chunks.values()].find((chunk) => chunk.isEntry);
  if (!entry) throw new Error(`${dir}: no entry chunk`);
  const initial = closure([entry.fileName]);
  const firstOpen = closure(byModule("/embed/src/panel.tsx"), new Set(initial));
  // The embeds build chat-ui's light renderer in streamdown's place (build.mjs).
  const markdown = closure(
    [
      ...byModule("/chat-ui/src/markdown-renderer.tsx"),
      ...byModule("/chat-ui/src/light-markdown.tsx"),
    ],
    new Set(firstOpen),
  );
  const sum = (names) =>
    [...names].reduce((total, name) => total + gzipBytes(chunks.get(name).code), 0);
  const rows = [...chunks.values()]
    .map((chunk) => ({
      chunk: chunk.fileName,
      loaded: initial.has(chunk.fileName)
        ? "initial"
        : firstOpen.has(chunk.fileName)
          ? "first open"
          : markdown.has(chunk.fileName)
            ? "markdown"
            : "lazy",
      gzipBytes: gzipBytes(chunk.code),
    }))
    .sort((a, b) => b.gzipBytes - a.gzipBytes);
  return {
    chunks: rows,
    initialBytes: sum(initial),
    firstOpenBytes: sum(firstOpen),
    markdownBytes: sum(markdown),
    allBytes: rows.reduce((total, row) => total + row.gzipBytes, 0),
  };
}

/** The `<parley-assistant>` script (packages/embed). */
export const measureEmbedScript = () => measure("embed");
/** @parley/react, without the host's react and react-dom. */
export const measureEmbedReact = () => measure("react");
