// What a benchmark reads of the processes it started, from /proc (Linux only): which workerd
// process under a `wrangler dev` runs the Worker, its CPU time and its resident memory, and the
// machine's load average, so a result says how busy the machine was while it was measured.
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";

/** Clock ticks per second of /proc/<pid>/stat's times (`getconf CLK_TCK`: 100 on Linux). */
const TICKS_PER_SECOND = 100;

function read(file) {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces). */
function statFields(pid) {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === null) return null;
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

function children(pid) {
  const found = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    // fields[1] is the parent's pid (the 4th field of stat).
    if (fields && Number(fields[1]) === pid) found.push(Number(entry));
  }
  return found;
}

/**
 * The workerd processes a `wrangler dev` (started as `rootPid`) runs: `runtime`, the one serving the
 * Worker and its Durable Objects (started with an inspector address), and `proxy`, wrangler's own
 * proxy in front of it (it holds the dev port and relays every request and frame). Null until
 * both exist.
 */
export function workerdOf(rootPid) {
  const queue = [rootPid];
  const workerds = [];
  while (queue.length > 0) {
    const pid = queue.shift();
    for (const child of children(pid)) {
      queue.push(child);
      if (read(`/proc/${child}/comm`)?.trim() === "workerd") workerds.push(child);
    }
  }
  const cmdline = (pid) => read(`/proc/${pid}/cmdline`)?.replaceAll("\0", " ") ?? "";
  const runtime = workerds.find((pid) => cmdline(pid).includes("--inspector-addr"));
  const proxy = workerds.find((pid) => pid !== runtime);
  return runtime === undefined ? null : { runtime, proxy: proxy ?? null };
}

/** CPU seconds a process has used (user + system), or null once it is gone. */
export function cpuSeconds(pid) {
  const fields = statFields(pid);
  if (!fields) return null;
  // utime and stime are the 14th and 15th fields of stat: 11 and 12 after the name.
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Resident memory of a process in bytes (VmRSS), or null once it is gone. */
export function rssBytes(pid) {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(read(`/proc/${pid}/status`) ?? "");
  return match ? Number(match[1]) * 1024 : null;
}

/**
 * CPU used by `pid` between `start()` and `stop()`, as a share of one core over that wall time.
 * Read from /proc at both ends: the process's own CPU, whatever else the machine runs.
 */
export function cpuWindow(pid) {
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  return {
    stop() {
      const seconds = (performance.now() - t0) / 1000;
      const cpu = (cpuSeconds(pid) ?? cpu0) - cpu0;
      return { cpu, seconds, share: cpu / seconds };
    },
  };
}

/** The machine's load average (1, 5 and 15 minutes), as text for a result. */
export function loadAverage() {
  return os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(" / ");
}

export const mib = (bytes) => bytes / 2 ** 20;
