#!/usr/bin/env node
// `pnpm bench`: runs the benchmarks against locally served Workers (wrangler dev, the runtime `pnpm dev`
// uses) and writes bench/RESULTS.md with the machine, the command and every figure. Not part of `pnpm test`.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { benchBilling } from "../bench/billing.mjs";
import { machine } from "../bench/lib.mjs";
import { benchTurns } from "../bench/turns.mjs";

const root = path.resolve(import.meta.dirname, "..");
const sections = [];
const only = process.argv[2];
if (!only || only === "turns") {
  console.log("[bench] turn overhead");
  sections.push(await benchTurns());
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
writeFileSync(path.join(root, "bench/RESULTS.md"), report);
console.log(report);
