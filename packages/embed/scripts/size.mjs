// Prints what each embed costs a page (see measure.mjs for what is counted).
// Run: pnpm size inside packages/embed (or packages/react).
import { measureEmbedReact, measureEmbedScript } from "./measure.mjs";

const kb = (bytes) => `${(bytes / 1000).toFixed(1)} KB`;
const BUDGET = 60_000;
for (const [name, measure] of [
  ["<parley-assistant> script (Preact)", measureEmbedScript],
  ["@parley/react (host's React excluded)", measureEmbedReact],
]) {
  const size = await measure();
  console.log(`\n${name}`);
  console.table(
    size.chunks
      .filter((row) => row.loaded !== "lazy")
      .map((row) => ({ ...row, gzipKb: Number((row.gzipBytes / 1000).toFixed(1)) })),
  );
  console.log(`initial JS:       ${kb(size.initialBytes)} gzip (budget ${kb(BUDGET)})`);
  console.log(`first open:       ${kb(size.firstOpenBytes)} gzip (initial + panel and chat)`);
  console.log(
    `+ markdown:       ${kb(size.markdownBytes)} gzip (renderer fetched after the chat shows)`,
  );
  console.log(
    `all chunks:       ${kb(size.allBytes)} gzip (${size.chunks.length}, Shiki grammars included)`,
  );
}
