// Measures the chat package as the app would ship it: a Vite library build of src/index.ts with
// the dependencies the app already ships (React, the AI SDK, agents) left external, so the figures
// are what this package adds. "initial" is the entry chunk plus every chunk it imports statically;
// lazily imported chunks (the code highlighter) are listed but cost nothing until a code block shows.
// Used by scripts/size.mjs (the `pnpm size` CLI) and by the repo's `pnpm bench size` (bench/size.mjs).
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "vite";

const root = fileURLToPath(new URL("..", import.meta.url));
const shared = ["react", "react-dom", "ai", "agents", "@cloudflare/ai-chat", "@ai-sdk/react"];
const external = (id) => shared.some((name) => id === name || id.startsWith(`${name}/`));

/**
 * Builds the package (nothing written to disk) and returns every chunk with its gzip size in bytes
 * (level 9), whether it loads initially, and the entry's, the initial and the total bytes.
 * @returns {Promise<{ chunks: { chunk: string, loaded: "initial" | "lazy", gzipBytes: number }[],
 *   entryBytes: number, initialBytes: number, allBytes: number }>}
 */
export async function measureChatUi() {
  const result = await build({
    root,
    configFile: false,
    logLevel: "silent",
    build: {
      write: false,
      minify: true,
      lib: { entry: "src/index.ts", formats: ["es"], fileName: "index" },
      rollupOptions: { external },
    },
  });

  const outputs = (Array.isArray(result) ? result : [result]).flatMap((entry) => entry.output);
  const chunks = new Map(
    outputs.filter((item) => item.type === "chunk").map((chunk) => [chunk.fileName, chunk]),
  );
  const gzipBytes = (code) => gzipSync(code, { level: 9 }).length;

  const entry = [...chunks.values()].find((chunk) => chunk.isEntry);
  if (!entry) throw new Error("no entry chunk");
  const initial = new Set();
  const visit = (name) => {
    if (initial.has(name)) return;
    initial.add(name);
    for (const imported of chunks.get(name)?.imports ?? []) visit(imported);
  };
  visit(entry.fileName);

  const rows = [...chunks.values()]
    .map((chunk) => ({
      chunk: chunk.fileName,
      loaded: initial.has(chunk.fileName) ? "initial" : "lazy",
      gzipBytes: gzipBytes(chunk.code),
    }))
    .sort((a, b) => b.gzipBytes - a.gzipBytes);
  const total = (list) => list.reduce((sum, row) => sum + row.gzipBytes, 0);
  return {
    chunks: rows,
    entryBytes: gzipBytes(entry.code),
    initialBytes: total(rows.filter((row) => row.loaded === "initial")),
    allBytes: total(rows),
  };
}
