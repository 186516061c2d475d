// Prints what each embed costs a page (see measure.mjs for what is counted).
// Run: pnpm size inside packages/embed (or packages/react).
import { measureEmbedReact, measureEmbedScript } from "./measure.mjs";

const kb = (bytes) => `${(bytes / 1000).toFixed(1)} KB`;
/**
 * Issue 15: "Each loads at most 60 KB gzip". Checked for what a page loads before anyone opens
 * the assistant, for the first open, and for a first open that shows a reply with markdown.
 */
const BUDGET = 60_000;
let over = false;
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
  const check = (bytes) => {
    if (bytes > BUDGET) over = true;
    return bytes > BUDGET ? `OVER the ${kb(BUDGET)} budget` : `budget ${kb(BUDGET)}`;
  };
  console.log(`initial JS:       ${kb(size.initialBytes)} gzip (${check(size.initialBytes)})`);
  console.log(
    `first open:       ${kb(size.firstOpenBytes)} gzip (initial + panel and chat; ${check(size.firstOpenBytes)})`,
  );
  console.log(
    `+ markdown:       ${kb(size.markdownBytes)} gzip (renderer fetched after the chat shows; ${check(size.markdownBytes)})`,
  );
  console.log(`all chunks:       ${kb(size.allBytes)} gzip (${size.chunks.length})`);
}
if (over) {
  console.error("\nAn embed is over its budget.");
  process.exitCode = 1;
}
