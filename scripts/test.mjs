#!/usr/bin/env node
// `pnpm test`: every package's tests through turbo, then one closing line with the totals
// ("N passed, N failed") summed from each vitest run, so CI can read the result in any log.
import { spawn } from "node:child_process";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const turbo = path.join(root, "node_modules/turbo/bin/turbo");
// One package at a time: these machines have 2 cores, and workerd tests are timing-sensitive.
const args = ["run", "test", "--concurrency=1", "--continue", ...process.argv.slice(2)];

const child = spawn(process.execPath, [turbo, ...args], {
  cwd: root,
  stdio: ["ignore", "pipe", "pipe"],
});
let output = "";
for (const stream of [child.stdout, child.stderr]) {
  stream.on("data", (chunk) => {
    output += chunk;
    (stream === child.stdout ? process.stdout : process.stderr).write(chunk);
  });
}

const code = await new Promise((resolve) => child.on("close", (status) => resolve(status ?? 1)));
// biome-ignore lint/suspicious/noControlCharactersInRegex: strips ANSI colour codes
const plain = output.replace(/\u001b\[[0-9;]*m/g, "");
let passed = 0;
let failed = 0;
let skipped = 0;
for (const [, summary] of plain.matchAll(/^\S*\s*Tests\s+(.+\(\d+\))\s*$/gm)) {
  passed += Number(/(\d+) passed/.exec(summary)?.[1] ?? 0);
  failed += Number(/(\d+) failed/.exec(summary)?.[1] ?? 0);
  skipped += Number(/(\d+) skipped/.exec(summary)?.[1] ?? 0);
}
if (code !== 0 && failed === 0) failed = 1; // a run that broke before reporting still fails
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(code);
