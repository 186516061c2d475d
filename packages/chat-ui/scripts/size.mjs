// Prints the chat package's size as the app would ship it (see measure.mjs for what is measured).
// Run: pnpm size (or pnpm exec node scripts/size.mjs) inside packages/chat-ui.
import { measureChatUi } from "./measure.mjs";

const { chunks, entryBytes } = await measureChatUi();
const kb = (bytes) => bytes / 1024;
const rows = chunks.map(({ chunk, loaded, gzipBytes }) => ({
  chunk,
  loaded,
  gzipKb: Number(kb(gzipBytes).toFixed(1)),
}));
const sum = (list) => list.reduce((total, row) => total + row.gzipKb, 0).toFixed(1);
const initialRows = rows.filter((row) => row.loaded === "initial");

const lazyRows = rows.filter((row) => row.loaded === "lazy");
console.log("initial chunks");
console.table(initialRows);
console.log("largest lazy chunks (Shiki grammars load one per fenced language, on demand)");
console.table(lazyRows.slice(0, 8));
console.log(`entry chunk:  ${kb(entryBytes).toFixed(1)} KB gzip`);
console.log(`initial JS:   ${sum(initialRows)} KB gzip (entry + static imports, budget 60 KB)`);
console.log(`all chunks:   ${sum(rows)} KB gzip (${rows.length} chunks)`);
