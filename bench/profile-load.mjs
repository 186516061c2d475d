// A CPU profile of the Worker's isolate under the soak's load (issue 29): `sessions` sessions
// chatting without pause on one agent (the platform, or `bare`), in slices with a pause long enough
// between them for workerd to hibernate the objects (so each slice pays their wake-ups, as the
// soak's do), profiled after a warm-up; per function in ms per turn, beside workerd's own CPU per
// turn from /proc (which counts what runs outside JS too). A diagnostic for
// `pnpm bench profile-load [seconds] [bare] [sessions=N] [pause=S]`, not part of RESULTS.md.
import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { inspector } from "./inspector.mjs";
import { freePort, startModelProcess } from "./lib.mjs";
import { cpuWindow, loadAverage, mib, rssBytes, workerdOf } from "./proc.mjs";
import { summarizeProfile } from "./profile.mjs";
import { SOAK_SESSIONS, soakBare, soakLoad, soakPlatform, soakSessions } from "./soak.mjs";

export async function benchProfileLoad({
  seconds = 60,
  bare = false,
  sessions = SOAK_SESSIONS,
  sliceSeconds = 30,
  pauseSeconds = 15,
  warmUpSeconds = 20,
} = {}) {
  const model = await startModelProcess({ latencyMs: 150, tokensPerSecond: 60 });
  const inspectorPort = await freePort();
  let worker;
  try {
    const kind = bare ? "bare" : "platform";
    worker = await (bare ? soakBare : soakPlatform)(model.url, { inspectorPort });
    const pid = workerdOf(worker.pid)?.runtime;
    const load = soakLoad((await soakSessions(kind, worker.url, sessions)).sessions);
    await load.run(warmUpSeconds * 1000);
    const cdp = await inspector(inspectorPort);
    await cdp.call("Profiler.enable");
    await cdp.call("Profiler.setSamplingInterval", { interval: 100 });
    const turns0 = load.totals.turns;
    const rss0 = rssBytes(pid);
    let cpu = 0;
    let active = 0;
    await cdp.call("Profiler.start");
    for (let left = seconds; left > 0; left -= sliceSeconds) {
      // Objects hibernate 10 s after their last event; the pause lets them, so the slice wakes them.
      if (pauseSeconds > 0) await new Promise((r) => setTimeout(r, pauseSeconds * 1000));
      const window = cpuWindow(pid);
      await load.run(Math.min(left, sliceSeconds) * 1000);
      const used = window.stop();
      cpu += used.cpu;
      active += used.seconds;
    }
    const { profile } = await cdp.call("Profiler.stop");
    // The bundle is minified (wrangler.jsonc): its source, to read a profile's line:column in.
    const scripts = [];
    const off = cdp.on("Debugger.scriptParsed", (s) => scripts.push(s));
    await cdp.call("Debugger.enable");
    off();
    const bundle = scripts.find((s) => s.url === "index.js");
    const source = bundle
      ? (await cdp.call("Debugger.getScriptSource", { scriptId: bundle.scriptId })).scriptSource
      : "";
    cdp.close();
    const turns = load.totals.turns - turns0;
    await load.close();
    const file = path.join(os.tmpdir(), `parley-load-${kind}-pause${pauseSeconds}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    writeFileSync(file.replace(/\.cpuprofile$/, ".index.js"), source);
    return [
      `${kind}: ${sessions} sessions, ${turns} turns profiled (${(turns / active).toFixed(2)} turns/s, ${load.totals.errors} errors, ${load.totals.connects} connects); load average ${loadAverage()}`,
      `workerd CPU ${((cpu / active) * 100).toFixed(0)}% of a core, ${((cpu * 1000) / turns).toFixed(1)} ms per turn; RSS ${mib(rss0).toFixed(1)} -> ${mib(rssBytes(pid)).toFixed(1)} MiB`,
      summarizeProfile(profile, turns, 40),
      "",
      `Whole profile: ${file}`,
    ].join("\n");
  } finally {
    worker?.stop();
    model.stop();
  }
}
