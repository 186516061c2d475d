// A minimal Chrome DevTools Protocol client for wrangler dev's inspector (`--inspector-port`), which
// reaches the isolate that runs the Worker and its Durable Objects: CPU profiles (profile.mjs),
// heap usage and heap snapshots (soak.mjs, heap.mjs).
import { createWriteStream } from "node:fs";

/** Connects to the first target the inspector lists (the Worker's isolate). */
export async function inspector(port) {
  const [target] = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  // The inspector proxy only takes local origins.
  const ws = new WebSocket(target.webSocketDebuggerUrl, {
    headers: { Origin: "http://localhost" },
  });
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", () => reject(new Error("inspector refused")), { once: true });
  });
  let next = 0;
  const pending = new Map();
  const listeners = new Map();
  ws.addEventListener("message", (event) => {
    const message = JSON.parse(event.data);
    if (message.id === undefined) {
      for (const listener of listeners.get(message.method) ?? []) listener(message.params);
      return;
    }
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  const call = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      pending.set(id, (message) =>
        message.error
          ? reject(new Error(`${method}: ${message.error.message}`))
          : resolve(message.result),
      );
      ws.send(JSON.stringify({ id, method, params }));
    });
  const on = (method, listener) => {
    listeners.set(method, [...(listeners.get(method) ?? []), listener]);
    return () =>
      listeners.set(
        method,
        (listeners.get(method) ?? []).filter((l) => l !== listener),
      );
  };
  return {
    call,
    on,
    /**
     * JS heap in use after a full garbage collection, in bytes (what survives, not garbage).
     * workerd's inspector never answers `HeapProfiler.collectGarbage`; a heap snapshot collects
     * first, so one is taken and thrown away.
     */
    async heapAfterGc() {
      const off = on("HeapProfiler.addHeapSnapshotChunk", () => {});
      await call("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
      off();
      const { usedSize } = await call("Runtime.getHeapUsage");
      return usedSize;
    },
    /** Writes a heap snapshot (taken after a full GC, as V8 always does) to `file`. */
    async heapSnapshot(file) {
      const out = createWriteStream(file);
      const off = on("HeapProfiler.addHeapSnapshotChunk", ({ chunk }) => out.write(chunk));
      await call("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
      off();
      await new Promise((resolve, reject) =>
        out.end((error) => (error ? reject(error) : resolve())),
      );
    },
    close: () => ws.close(),
  };
}
