// Measures the chat package as the app would ship it: a Vite library build of src/index.ts with
// the dependencies the app already ships (React, the AI SDK, agents) left external, so the figures
// are what this package adds. "initial" is the entry chunk plus every chunk it imports statically;
// lazily imported chunks (the code highlighter) are listed but cost nothing until a code block shows.
// Run: pnpm size (or pnpm exec node scripts/size.mjs) inside packages/chat-ui.
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "vite";

const root = fileURLToPath(new URL("..", import.meta.url));
const shared = ["react", "react-dom", "ai", "agents", "@cloudflare/ai-chat", "@ai-sdk/react"];
const external = (id) => shared.some((name) => id === name || id.startsWith(`${name}/`));

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
const gzipKb = (code) => gzipSync(code, { level: 9 }).length / 1024;

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
    gzipKb: Number(gzipKb(chunk.code).toFixed(1)),
  }))
  .sort((a, b) => b.gzipKb - a.gzipKb);
const sum = (list) => list.reduce((total, row) => total + row.gzipKb, 0).toFixed(1);
const initialRows = rows.filter((row) => row.loaded === "initial");

const lazyRows = rows.filter((row) => row.loaded === "lazy");
console.log("initial chunks");
console.table(initialRows);
console.log("largest lazy chunks (Shiki grammars load one per fenced language, on demand)");
console.table(lazyRows.slice(0, 8));
console.log(`entry chunk:  ${gzipKb(entry.code).toFixed(1)} KB gzip`);
console.log(`initial JS:   ${sum(initialRows)} KB gzip (entry + static imports, budget 60 KB)`);
console.log(`all chunks:   ${sum(rows)} KB gzip (${rows.length} chunks)`);
