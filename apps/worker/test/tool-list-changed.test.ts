import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import type { ToolSource } from "@parley/shared";
import { beforeAll, describe, expect, it } from "vitest";
import { sourceClient, type ToolSourceClient } from "../src/tools/source-client.ts";
import { api, world } from "./helpers.ts";
import { lab, labSource, type Seen, seen, shareJwks } from "./tools.ts";

beforeAll(shareJwks);

/**
 * Issue 30.1: an MCP source's tools are listed, refreshed on demand and on change. "On change" is
 * the source's listener (tools/source-listener.ts): its own session's GET stream carries the
 * server's `notifications/tools/list_changed`, between turns, with no call and no refresh.
 */

/** Changes the lab's tool list for one source, in its live sessions and its later ones. */
async function changeLabTools(src: string, change: { add?: string[]; remove?: string[] }) {
  const res = await fetch(`${lab()}/__tools`, {
    method: "POST",
    body: JSON.stringify({ src, ...change }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { live: number };
}

/** The source's stored tool names, read through the API until `done` holds or the deadline. */
async function namesUntil(
  id: string,
  token: string,
  done: (names: string[]) => boolean,
  deadlineMs = 10_000,
): Promise<string[]> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const res = await api<ToolSource>("GET", `/api/tool-sources/${id}`, { token });
    expect(res.status).toBe(200);
    const names = res.body.tools.map((t) => t.name);
    if (done(names) || Date.now() > until) return names;
    await sleep(100);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the lab received for one source. */
const seenFor = async (src: string): Promise<Seen[]> =>
  (await seen()).filter((s) => s.server === "lab" && s.claims?.src === src);

const count = (log: Seen[], method: string, rpc: string | null = null) =>
  log.filter((s) => s.method === method && (rpc === null || s.rpc === rpc)).length;

/** Waits until `check` holds on what the lab received for `src` (or the deadline). */
async function seenUntil(src: string, check: (log: Seen[]) => boolean, deadlineMs = 10_000) {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const log = await seenFor(src);
    if (check(log) || Date.now() > until) return log;
    await sleep(100);
  }
}

const listenJob = (id: string) =>
  runInDurableObject(sourceClient(env, id), (object: ToolSourceClient) =>
    object.lifecycle.jobs.get("listen"),
  );

describe("an MCP source's listener", () => {
  it("a tool the server adds or removes between turns reaches the stored list, with no call and no refresh", async () => {
    const w = await world();
    const source = await labSource(w.orgId, w.admin.token);
    expect(source.tools.map((t) => t.name)).toContain("note");

    // Nobody calls a tool and nobody refreshes: the registration's listing left the listener's
    // session (and its stream) open.
    const { live } = await changeLabTools(source.id, { add: ["added_later"], remove: ["note"] });
    expect(live).toBe(1);
    const started = Date.now();
    const changed = await namesUntil(
      source.id,
      w.admin.token,
      (names) => names.includes("added_later") && !names.includes("note"),
    );
    expect(changed).toContain("added_later");
    expect(changed).not.toContain("note");
    expect(changed).toEqual(expect.arrayContaining(["whoami", "slow", "big", "fails"]));
    // Within the debounce and a listing, not at a later poll.
    expect(Date.now() - started).toBeLessThan(5_000);

    await changeLabTools(source.id, { remove: ["added_later"] });
    const shrunk = await namesUntil(
      source.id,
      w.admin.token,
      (names) => !names.includes("added_later"),
    );
    expect(shrunk).not.toContain("added_later");
    expect(shrunk).toContain("whoami");
    expect(count(await seenFor(source.id), "POST", "tools/call")).toBe(0);
  });

  it("a burst of list_changed is one re-list", async () => {
    const w = await world();
    const source = await labSource(w.orgId, w.admin.token);
    const before = count(await seenFor(source.id), "POST", "tools/list");
    const burst = ["burst_1", "burst_2", "burst_3", "burst_4", "burst_5"];
    for (const name of burst) await changeLabTools(source.id, { add: [name] });
    const names = await namesUntil(source.id, w.admin.token, (listed) =>
      burst.every((name) => listed.includes(name)),
    );
    expect(names).toEqual(expect.arrayContaining(burst));
    // Past the debounce (500 ms) again: no second listing comes.
    await sleep(1_500);
    expect(count(await seenFor(source.id), "POST", "tools/list") - before).toBe(1);
  });

  it("a stream the server drops is reopened by the object's alarm, and hears the next change", async () => {
    const w = await world();
    const source = await labSource(w.orgId, w.admin.token);
    const streams = count(await seenFor(source.id), "GET");
    expect(streams).toBe(1);
    const res = await fetch(`${lab()}/__drop`, {
      method: "POST",
      body: JSON.stringify({ src: source.id }),
    });
    expect(((await res.json()) as { dropped: number }).dropped).toBe(1);
    // The job reopens it on a fresh session after the first backoff (1 s).
    const log = await seenUntil(source.id, (entries) => count(entries, "GET") > streams);
    expect(count(log, "GET")).toBe(streams + 1);
    // The old session was ended (DELETE) before the new one began.
    expect(count(log, "DELETE")).toBeGreaterThanOrEqual(1);
    expect((await listenJob(source.id))?.time).toBeGreaterThan(Date.now());

    const { live } = await changeLabTools(source.id, { add: ["after_reopen"] });
    expect(live).toBe(1);
    const names = await namesUntil(source.id, w.admin.token, (listed) =>
      listed.includes("after_reopen"),
    );
    expect(names).toContain("after_reopen");
  });

  it("deleting the source ends its session with DELETE and stops listening", async () => {
    const w = await world();
    const source = await labSource(w.orgId, w.admin.token);
    expect(count(await seenFor(source.id), "GET")).toBe(1);
    expect(await listenJob(source.id)).toBeDefined();
    const removed = await api("DELETE", `/api/tool-sources/${source.id}`, {
      token: w.admin.token,
    });
    expect(removed.status).toBe(204);
    const log = await seenFor(source.id);
    expect(count(log, "DELETE")).toBe(1);
    expect(log.find((s) => s.method === "DELETE")?.claims).toMatchObject({
      kind: "source",
      sub: source.id,
    });
    // The server has no session of the source left to tell, and the object nothing to wake it.
    expect((await changeLabTools(source.id, { add: ["too_late"] })).live).toBe(0);
    expect(await listenJob(source.id)).toBeUndefined();
  });

  it("a source switched off ends its session with DELETE, and switched on listens again", async () => {
    const w = await world();
    const source = await labSource(w.orgId, w.admin.token);
    expect(count(await seenFor(source.id), "GET")).toBe(1);
    const off = await api("PATCH", `/api/tool-sources/${source.id}`, {
      token: w.admin.token,
      body: { enabled: false },
    });
    expect(off.status).toBe(200);
    expect(count(await seenFor(source.id), "DELETE")).toBe(1);
    expect((await changeLabTools(source.id, { add: ["while_off"] })).live).toBe(0);
    const on = await api("PATCH", `/api/tool-sources/${source.id}`, {
      token: w.admin.token,
      body: { enabled: true },
    });
    expect(on.status).toBe(200);
    // Listed again at once (the tool added while it was off is there) and listening.
    expect(JSON.stringify(on.body)).toContain("while_off");
    expect(count(await seenFor(source.id), "GET")).toBe(2);
  });

  it("an org erased whole ends its sources' sessions with DELETE and leaves nothing listening", async () => {
    const w = await world();
    // The outsider alone belongs to their org: erasing their account erases it whole.
    const source = await labSource(w.otherOrgId, w.outsider.token);
    expect(count(await seenFor(source.id), "GET")).toBe(1);
    const erased = await api<{ status: string }>("DELETE", "/api/me", {
      token: w.outsider.token,
      body: { confirm: true },
    });
    expect(erased.body.status).toBe("completed");
    expect(count(await seenFor(source.id), "DELETE")).toBe(1);
    expect((await changeLabTools(source.id, { add: ["after_erasure"] })).live).toBe(0);
    // The object kept nothing, not even an alarm to wake it.
    const alarm = await runInDurableObject(sourceClient(env, source.id), (_object, state) =>
      state.storage.getAlarm(),
    );
    expect(alarm).toBeNull();
  });

  it("a changed URL moves the listener to it, ending the old session", async () => {
    const w = await world();
    const source = await labSource(w.orgId, w.admin.token);
    const changed = await api<ToolSource>("PATCH", `/api/tool-sources/${source.id}`, {
      token: w.admin.token,
      body: { url: `${lab()}/mcp-poll` },
    });
    expect(changed.status).toBe(200);
    const log = await seenFor(source.id);
    expect(log.some((s) => s.method === "DELETE" && s.path === "/mcp")).toBe(true);
    expect(log.some((s) => s.method === "GET" && s.path === "/mcp-poll")).toBe(true);
    // The /mcp session is gone, so nobody hears of a change there any more.
    expect((await changeLabTools(source.id, { add: ["old_url"] })).live).toBe(0);
  });

  it("a server without the GET stream (405) still works: listed, called, and re-listed at the poll interval", async () => {
    const w = await world();
    const source = await labSource(w.orgId, w.admin.token, { url: `${lab()}/mcp-poll` });
    expect(source.tools.map((t) => t.name)).toContain("whoami");
    expect(source.health.status).toBe("healthy");
    const log = await seenFor(source.id);
    expect(log.some((s) => s.method === "GET" && s.path === "/mcp-poll")).toBe(true);
    // Nothing to hold: the session ended at once, and the job comes back in an hour.
    expect(count(log, "DELETE")).toBe(1);
    const job = await listenJob(source.id);
    expect(job?.time).toBeGreaterThan(Date.now() + 59 * 60_000);
    expect(job?.time).toBeLessThan(Date.now() + 61 * 60_000);

    const called = await sourceClient(env, source.id).call({
      source: {
        id: source.id,
        orgId: w.orgId,
        kind: "mcp",
        url: source.url,
        version: source.version,
        credentialHeader: null,
        credentialSealed: null,
      },
      tool: { name: "whoami", method: null, path: null },
      args: {},
      identity: {
        subject: w.admin.id,
        subjectKind: "member",
        orgId: w.orgId,
        appId: null,
        sessionId: null,
      },
      timeoutMs: 5_000,
      maxResponseBytes: 1_000_000,
    });
    expect(called.ok).toBe(true);

    // The server changes; an hour passes (the job's time is moved to now) and the alarm lists.
    await changeLabTools(source.id, { add: ["polled_in"] });
    const stub = sourceClient(env, source.id);
    await runInDurableObject(stub, (object: ToolSourceClient) =>
      object.lifecycle.jobs.reschedule("listen", Date.now()),
    );
    // The alarm may already have fired for the moved job; if not, it runs now.
    await runDurableObjectAlarm(stub);
    const names = await namesUntil(source.id, w.admin.token, (listed) =>
      listed.includes("polled_in"),
    );
    expect(names).toContain("polled_in");
    expect((await listenJob(source.id))?.time).toBeGreaterThan(Date.now() + 59 * 60_000);
  });

  it("the listing never carries a member's or end user's identity, even after their call", async () => {
    const w = await world();
    const source = await labSource(w.orgId, w.admin.token);
    const called = await sourceClient(env, source.id).call({
      source: {
        id: source.id,
        orgId: w.orgId,
        kind: "mcp",
        url: source.url,
        version: source.version,
        credentialHeader: null,
        credentialSealed: null,
      },
      tool: { name: "whoami", method: null, path: null },
      args: {},
      identity: {
        subject: "shop-user-zed",
        subjectKind: "end_user",
        orgId: w.orgId,
        appId: "app_test",
        sessionId: "ses_test",
      },
      timeoutMs: 5_000,
      maxResponseBytes: 1_000_000,
    });
    expect(called.ok).toBe(true);
    await changeLabTools(source.id, { add: ["after_call"] });
    await namesUntil(source.id, w.admin.token, (listed) => listed.includes("after_call"));

    const log = await seenFor(source.id);
    const calls = log.filter((s) => s.rpc === "tools/call");
    expect(calls.map((s) => s.claims?.sub)).toEqual(["shop-user-zed"]);
    const own = log.filter((s) => s.rpc !== "tools/call");
    // Registration's listing, the stream, the re-list after the change, the calls' connection's
    // initialize: all of them as the source.
    expect(count(own, "POST", "tools/list")).toBeGreaterThanOrEqual(2);
    expect(count(own, "GET")).toBeGreaterThanOrEqual(1);
    for (const entry of own) {
      expect(entry.claims).toMatchObject({ kind: "source", sub: source.id, org: w.orgId });
      expect(entry.claims?.session).toBeUndefined();
      expect(entry.claims?.app).toBeUndefined();
      expect(entry.claims?.tool).toBeUndefined();
    }
    expect(JSON.stringify(own)).not.toContain(w.admin.id);
  });
});
