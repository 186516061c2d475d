#!/usr/bin/env node
// `pnpm bench`: runs the benchmarks against locally served Workers (wrangler dev, the runtime `pnpm dev`
// uses) and writes bench/RESULTS.md with the machine, the command and every figure. Not part of `pnpm test`.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { benchBilling } from "../bench/billing.mjs";
import { benchConcurrency } from "../bench/concurrency.mjs";
import { benchHistory } from "../bench/history.mjs";
import { machine } from "../bench/lib.mjs";
import { benchSize } from "../bench/size.mjs";
import { benchTurns } from "../bench/turns.mjs";

const root = path.resolve(import.meta.dirname, "..");
const sections = [];
const only = process.argv[2];
if (!only || only === "turns") {
  console.log("[bench] turn overhead");
  sections.push(await benchTurns());
}
if (!only || only === "concurrency") {
  console.log("[bench] concurrency");
  sections.push(await benchConcurrency());
}
if (!only || only === "history") {
  console.log("[bench] long history");
  sections.push(await benchHistory());
}
if (!only || only === "size") {
  console.log("[bench] size");
  spawnSync(
    process.execPath,
    [path.join(root, "node_modules/turbo/bin/turbo"), "run", "build", "--filter=@parley/web"],
    {
      cwd: root,
      stdio: "inherit",
    },
  );
  sections.push(benchSize());
}
if (!only || only === "billing") {
  console.log("[bench] billing");
  sections.push(await benchBilling());
}

const report = [
  "# Benchmark results",
  "",
  `Measured ${new Date().toISOString()} on ${machine()}, by \`pnpm bench\` (scripts/bench.mjs).`,
  "These machines are noisy: compare figures from one run, not across runs.",
  "",
  ...sections,
  "",
].join("\n");
// A partial run (`pnpm bench turns`) only prints: RESULTS.md always holds one whole run.
if (!only) writeFileSync(path.join(root, "bench/RESULTS.md"), report);
console.log(report);
