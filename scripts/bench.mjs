#!/usr/bin/env node
// `pnpm bench`: runs the benchmarks against locally served Workers (wrangler dev, the runtime `pnpm dev`
// uses) and writes bench/RESULTS.md with the machine, the command and every figure. Not part of `pnpm test`.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { benchBilling } from "../bench/billing.mjs";
import { benchConcurrency } from "../bench/concurrency.mjs";
import { benchEmbed } from "../bench/embed.mjs";
import { benchHeap } from "../bench/heap.mjs";
import { benchHistory } from "../bench/history.mjs";
import { benchKnowledge } from "../bench/knowledge.mjs";
import { benchLeases } from "../bench/leases.mjs";
import { machine } from "../bench/lib.mjs";
import { benchProfile } from "../bench/profile.mjs";
import { benchProfileLoad } from "../bench/profile-load.mjs";
import { benchSize } from "../bench/size.mjs";
import { benchSoak } from "../bench/soak.mjs";
import { benchStress } from "../bench/stress.mjs";
import { benchTools } from "../bench/tools.mjs";
import { benchTurns } from "../bench/turns.mjs";
import { benchWeb } from "../bench/web.mjs";

const root = path.resolve(import.meta.dirname, "..");
// `pnpm bench profile [turns] [bare] [paced] [fresh] [chosen]`: a CPU profile of turns, printed (a
// diagnostic, not a result); `paced` streams at the concurrency benchmark's model speed, `fresh`
// makes each turn a new session's first, `chosen` runs the project on a tenant's profile and a
// non-default model (issue 29), `alloc` samples what the turns allocate (garbage included) instead
// of their CPU.
if (process.argv[2] === "profile") {
  const turns = Number(process.argv[3] ?? 100);
  const flags = process.argv.slice(4);
  console.log(
    await benchProfile({
      turns,
      bare: flags.includes("bare"),
      paced: flags.includes("paced"),
      fresh: flags.includes("fresh"),
      chosen: flags.includes("chosen"),
      alloc: flags.includes("alloc"),
    }),
  );
  process.exit(0);
}
/** `name=N` among the arguments, as a number, else `fallback`. */
const numberArg = (flags, name, fallback) =>
  Number(flags.find((f) => f.startsWith(`${name}=`))?.slice(name.length + 1) ?? fallback);
/** The first bare number among the arguments (minutes), else `fallback`. */
const minutesArg = (flags, fallback) =>
  Number(flags.find((f) => /^\d+(\.\d+)?$/.test(f)) ?? fallback);
// `pnpm bench profile-load [seconds] [bare] [sessions=N] [pause=S] [warm=S]`: a CPU profile under the
// soak's load (its sessions, in slices with a pause for hibernation between them), per function
// per turn, beside workerd's CPU per turn (a diagnostic, not a result).
if (process.argv[2] === "profile-load") {
  const flags = process.argv.slice(3);
  console.log(
    await benchProfileLoad({
      seconds: minutesArg(flags, 60),
      bare: flags.includes("bare"),
      sessions: numberArg(flags, "sessions", 40),
      pauseSeconds: numberArg(flags, "pause", 15),
      warmUpSeconds: numberArg(flags, "warm", 20),
    }),
  );
  process.exit(0);
}
// `pnpm bench heap [minutes] [bare] [sessions=N] [traced]`: heap snapshots of the Worker's isolate
// before and after minutes of the soak's load, compared (a diagnostic: where the memory goes).
if (process.argv[2] === "heap") {
  const flags = process.argv.slice(3);
  console.log(
    await benchHeap({
      minutes: minutesArg(flags, 2),
      bare: flags.includes("bare"),
      sessions: numberArg(flags, "sessions", 40),
      traced: flags.includes("traced"),
    }),
  );
  process.exit(0);
}
const sections = [];
const only = process.argv[2];
if (!only || only === "turns") {
  console.log("[bench] turn overhead");
  sections.push(await benchTurns());
}
if (!only || only === "concurrency") {
  // `pnpm bench concurrency [sessions=N] [rounds=N] [turns=N]`: `sessions` skips the search for the
  // load the bare agent sustains and measures at N.
  const flags = only ? process.argv.slice(3) : [];
  console.log("[bench] concurrency at a load the bare agent sustains");
  sections.push(
    await benchConcurrency({
      sessions: flags.some((f) => f.startsWith("sessions=")) ? numberArg(flags, "sessions") : null,
      rounds: numberArg(flags, "rounds", 4),
      turns: numberArg(flags, "turns", 10),
    }),
  );
}
if (!only || only === "stress") {
  console.log("[bench] concurrency under stress (200 sessions x 5 turns)");
  sections.push(await benchStress());
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
  sections.push(await benchSize());
}
if (!only || only === "web") {
  console.log("[bench] web app in Chromium");
  sections.push(await benchWeb());
}
if (!only || only === "embed") {
  console.log("[bench] the embed against the web app in Chromium");
  sections.push(await benchEmbed());
}
if (!only || only === "billing") {
  console.log("[bench] billing");
  sections.push(await benchBilling());
}
if (!only || only === "soak") {
  // `pnpm bench soak [minutes] [sessions=N] [traced]`: each agent chats `minutes` (8 by default; 1
  // to try it); `traced` keeps wrangler's local trace store on (bench/lib.mjs `startWorker`).
  const flags = only ? process.argv.slice(3) : [];
  const minutes = minutesArg(flags, 8);
  console.log(`[bench] soak, ${minutes} min on each agent`);
  sections.push(
    await benchSoak({
      minutes,
      sessions: numberArg(flags, "sessions", 40),
      traced: flags.includes("traced"),
    }),
  );
}
if (!only || only === "knowledge") {
  console.log("[bench] knowledge retrieval");
  sections.push(await benchKnowledge());
}
if (!only || only === "tools") {
  console.log("[bench] tool calls");
  sections.push(await benchTools());
}
if (!only || only === "leases") {
  console.log("[bench] one org, 500 sessions");
  sections.push(await benchLeases());
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
const results = path.join(root, "bench/RESULTS.md");
if (!only) {
  writeFileSync(results, report);
} else {
  // A partial run (`pnpm bench turns`) replaces its own sections in RESULTS.md, each marked with the
  // command and time that measured it; the others stay as their run left them.
  let text = existsSync(results) ? readFileSync(results, "utf8") : "# Benchmark results\n";
  for (const section of sections) {
    const title = section.split("\n", 1)[0];
    const marked = section.replace(
      title,
      `${title}\n\nMeasured ${new Date().toISOString()} on ${machine()}, by \`pnpm bench ${process.argv.slice(2).join(" ")}\`.`,
    );
    const start = text.indexOf(`${title}\n`);
    if (start === -1) {
      text = `${text.trimEnd()}\n\n${marked}\n`;
      continue;
    }
    const next = text.indexOf("\n## ", start + title.length);
    text = `${text.slice(0, start)}${marked}\n${next === -1 ? "" : text.slice(next + 1)}`;
  }
  writeFileSync(results, text);
}
console.log(report);
