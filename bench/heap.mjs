// Where a soak's memory goes (issue 29): the soak's load on one agent (the platform, or `bare`),
// a heap snapshot of the Worker's isolate after a warm-up and another after `minutes` more of it,
// and what was made between them and is still alive, grouped, with what holds it. A diagnostic for
// `pnpm bench heap [minutes] [bare] [sessions=N]`, not part of RESULTS.md; the snapshots are kept
// (open them in Chrome DevTools' Memory tab and compare).
import os from "node:os";
import path from "node:path";
import { compareSnapshots } from "./heap-snapshot.mjs";
import { inspector } from "./inspector.mjs";
import { freePort, startModelProcess } from "./lib.mjs";
import { loadAverage, mib, rssBytes, workerdOf } from "./proc.mjs";
import { SOAK_SESSIONS, soakBare, soakLoad, soakPlatform, soakSessions } from "./soak.mjs";

export async function benchHeap({
  minutes = 2,
  bare = false,
  sessions = SOAK_SESSIONS,
  traced = false,
} = {}) {
  const model = await startModelProcess({ latencyMs: 150, tokensPerSecond: 60 });
  const inspectorPort = await freePort();
  let worker;
  try {
    const kind = bare ? "bare" : "platform";
    worker = await (bare ? soakBare : soakPlatform)(model.url, { inspectorPort, traced });
    const pid = workerdOf(worker.pid)?.runtime;
    const load = soakLoad((await soakSessions(kind, worker.url, sessions)).sessions);
    const cdp = await inspector(inspectorPort);
    const files = [0, 1].map((i) => path.join(os.tmpdir(), `parley-${kind}-${i}.heapsnapshot`));
    const loadAtStart = loadAverage();
    await load.run(30_000);
    await cdp.heapSnapshot(files[0]);
    const at0 = { turns: load.totals.turns, rss: rssBytes(pid) };
    await load.run(minutes * 60_000);
    await load.close();
    // Sockets closed and turns ended: what is left is what the isolate keeps.
    await new Promise((r) => setTimeout(r, 5_000));
    await cdp.heapSnapshot(files[1]);
    const at1 = { turns: load.totals.turns, rss: rssBytes(pid) };
    cdp.close();
    const turns = at1.turns - at0.turns;
    return [
      `${kind}: ${sessions} sessions, ${turns} turns between the snapshots (${load.totals.errors} errors, ${load.totals.connects} connects); load average ${loadAtStart} -> ${loadAverage()}`,
      `workerd RSS ${mib(at0.rss).toFixed(1)} -> ${mib(at1.rss).toFixed(1)} MiB (${((at1.rss - at0.rss) / 1024 / turns).toFixed(1)} KiB a turn)`,
      compareSnapshots(files[0], files[1]),
      "",
      `Snapshots: ${files.join(", ")}`,
    ].join("\n");
  } finally {
    worker?.stop();
    model.stop();
  }
}
