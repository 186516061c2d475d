import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import type { ToolSource } from "@parley/shared";
import { beforeAll, describe, expect, it } from "vitest";
import { sourceClient, type ToolSourceClient } from "../src/tools/source-client.ts";
import { type ChatSocket, mustConnect } from "./chat.ts";
import { api } from "./helpers.ts";
import { funded } from "./metering.ts";
import { register, type Seen, seen, shareJwks, v2 } from "./tools.ts";
import { INSTANT, makeProfile, useForProject } from "./turn-models.ts";

/**
 * Tool sources served by the official MCP TypeScript SDK's v2 (`@modelcontextprotocol/server`
 * 2.4.0; servers in test/tool-servers-v2.ts), in each HTTP mode its docs present, checked as an
 * outside tester would: registered through the API, listed, refreshed, called in a turn (a read at
 * once, a write after approval), the identity token arriving, a runtime change of the tool list
 * reaching the stored list (or the poll, where the server cannot push), refusals and tool errors,
 * and what deleting the source sends. docs/2026-12-06-tool-list-listener.md, "MCP server SDKs and
 * modes".
 */

beforeAll(shareJwks);

type Mode = "session" | "stateless" | "handler" | "modern";
type Chunk = Record<string, unknown>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const refOf = (source: ToolSource, name: string) =>
  source.tools.find((tool) => tool.name === name)?.ref as string;

const v2Source = (orgId: string, token: string, mode: Mode, tail = "mcp") =>
  register(orgId, token, {
    kind: "mcp",
    name: `V2 ${mode} ${crypto.randomUUID().slice(0, 6)}`,
    url: `${v2()}/${mode}/${tail}`,
  });

/** What the v2 servers received for one source. */
const seenFor = async (src: string): Promise<Seen[]> =>
  (await seen()).filter((s) => s.server === "v2" && s.claims?.src === src);

const count = (log: Seen[], method: string, rpc: string | null = null) =>
  log.filter((s) => s.method === method && (rpc === null || s.rpc === rpc)).length;

async function changeTools(src: string, change: { add?: string[]; remove?: string[] }) {
  const res = await fetch(`${v2()}/__tools`, {
    method: "POST",
    body: JSON.stringify({ src, ...change }),
  });
  expect(res.status).toBe(200);
}

async function namesUntil(id: string, token: string, done: (names: string[]) => boolean) {
  const until = Date.now() + 10_000;
  for (;;) {
    const res = await api<ToolSource>("GET", `/api/tool-sources/${id}`, { token });
    const names = res.body.tools.map((t) => t.name);
    if (done(names) || Date.now() > until) return names;
    await sleep(100);
  }
}

/** The listener's stored state and its job (source-listener.ts). */
const listener = (id: string) =>
  runInDurableObject(sourceClient(env, id), async (object: ToolSourceClient, state) => ({
    job: object.lifecycle.jobs.get("listen"),
    listen: await state.storage.get<{ mode: string; attempt: number }>("listen"),
  }));

async function answer(chat: ChatSocket, toolCallId: string, approved: boolean): Promise<Chunk[]> {
  const start = chat.frames.length;
  chat.send({ type: "cf_agent_tool_approval", toolCallId, approved, autoContinue: true });
  await chat.waitFor(
    (f) =>
      (f.type === "cf_agent_use_chat_response" && f.done === true) || f.type === "parley_error",
    15_000,
    start,
  );
  return chat.frames
    .slice(start)
    .filter((f) => f.type === "cf_agent_use_chat_response" && !f.error && f.body)
    .map((f) => JSON.parse(f.body as string) as Chunk);
}

describe.each<Mode>(["session", "stateless", "handler", "modern"])(
  "an MCP server of the SDK's v2, %s mode",
  (mode) => {
    it("is listed, refreshed, and called in a turn: a read at once as the member, a write after approval", async () => {
      const w = await funded();
      const source = await v2Source(w.orgId, w.admin.token, mode);
      expect(source.health.lastErrorCode).toBeNull();
      expect(source.tools.map((t) => [t.name, t.access, t.usable])).toEqual([
        ["whoami", "read", true],
        ["note", "write", true],
        ["fails", "read", true],
      ]);
      const refreshed = await api<ToolSource>("POST", `/api/tool-sources/${source.id}/refresh`, {
        token: w.admin.token,
      });
      expect(refreshed.status).toBe(200);
      expect(refreshed.body.tools.map((t) => t.name)).toEqual(["whoami", "note", "fails"]);

      await useForProject(
        w,
        await makeProfile(w, {
          tools: [refOf(source, "whoami"), refOf(source, "note"), refOf(source, "fails")],
        }),
      );
      const chat = await mustConnect(`/agents/assistant-agent/${w.sessionId}`, w.member.token);
      const read = await chat.turn(`Who am I? ${INSTANT} [[tool:whoami]]`);
      expect(read.error).toBeNull();
      const output = read.chunks.find((c) => c.type === "tool-output-available") as
        | { output: { result: { claims: Record<string, unknown> } } }
        | undefined;
      // The identity token arrived and the SDK's bearer check handed its claims to the tool.
      expect(output?.output.result.claims).toMatchObject({
        sub: w.member.id,
        kind: "member",
        org: w.orgId,
        src: source.id,
        session: w.sessionId,
        tool: "whoami",
      });

      const asked = await chat.turn(`Note it ${INSTANT} [[tool:note {"text":"hello v2"}]]`);
      const request = asked.chunks.find((c) => c.type === "tool-approval-request") as
        | { toolCallId: string }
        | undefined;
      expect(request?.toolCallId).toBeTruthy();
      expect(count(await seenFor(source.id), "POST", "tools/call")).toBe(1);
      const ran = (await answer(chat, request?.toolCallId as string, true)).find(
        (c) => c.type === "tool-output-available",
      ) as { output: { result: unknown; approvedBy: unknown } } | undefined;
      // The structured result is what the model reads.
      expect(ran?.output.result).toEqual({ noted: 8, by: w.member.id });
      expect(ran?.output.approvedBy).toEqual({ kind: "member", id: w.member.id });

      // A tool's error result reaches the model as a tool error, never a failed reply.
      const failed = await chat.turn(`Try ${INSTANT} [[tool:fails]]`);
      expect(failed.error).toBeNull();
      const card = failed.chunks.find((c) => c.type === "tool-output-error") as
        | { errorText: string }
        | undefined;
      expect(card?.errorText).toMatch(/the v2 lab refuses/);
      chat.close();

      // Only the calls carried the person; everything else named the source.
      const log = await seenFor(source.id);
      expect(log.filter((s) => s.rpc === "tools/call").map((s) => s.claims?.tool)).toEqual([
        "whoami",
        "note",
        "fails",
      ]);
      for (const entry of log.filter((s) => s.rpc !== "tools/call")) {
        expect(entry.claims).toMatchObject({ kind: "source", sub: source.id });
      }
      // One change channel per source, the listener's: the calls' connection opens none.
      const channels = log.filter((s) => s.method === "GET" || s.rpc === "subscriptions/listen");
      expect(channels.length).toBeLessThanOrEqual(2); // registration's and refresh's sessions
    });

    it("its refusals are `unauthorized`: the SDK's 401 for a token it rejects, its 403 for a missing scope", async () => {
      const w = await funded();
      for (const [tail, status] of [
        ["wrong-aud", 401],
        ["scoped", 403],
      ] as const) {
        const source = await v2Source(w.orgId, w.admin.token, mode, tail);
        expect(source.tools).toEqual([]);
        expect(source.health.lastErrorCode).toBe("unauthorized");
        expect(source.health.lastError).toContain(`(${status})`);
      }
    });
  },
);

describe("the listener on the SDK's v2 servers", () => {
  it.each<Mode>(["session", "handler", "modern"])(
    "%s mode: holds the server's change channel, and a runtime change reaches the stored list",
    async (mode) => {
      const w = await funded();
      const source = await v2Source(w.orgId, w.admin.token, mode);
      const { listen, job } = await listener(source.id);
      // Listening at once: not the backoff of a channel it waited for in vain.
      expect(listen).toMatchObject({ mode: "stream", attempt: 0 });
      expect(job?.time).toBeGreaterThan(Date.now() + 9 * 60_000);
      const log = await seenFor(source.id);
      // 2025 sessions push on the GET stream; 2026-07-28 on `subscriptions/listen`, never a GET.
      if (mode === "session") {
        expect(count(log, "GET")).toBe(1);
      } else {
        expect(count(log, "POST", "subscriptions/listen")).toBe(1);
        expect(count(log, "GET")).toBe(0);
      }

      const before = count(log, "POST", "tools/list");
      await changeTools(source.id, { add: ["added_later"], remove: ["fails"] });
      const names = await namesUntil(
        source.id,
        w.admin.token,
        (listed) => listed.includes("added_later") && !listed.includes("fails"),
      );
      expect(names).toEqual(["whoami", "note", "added_later"]);
      // One re-list on the same session, no reopen (which would list again).
      await sleep(1_500);
      const after = await seenFor(source.id);
      expect(count(after, "POST", "tools/list") - before).toBe(1);
      expect(count(after, "POST", "server/discover")).toBe(count(log, "POST", "server/discover"));

      const removed = await api("DELETE", `/api/tool-sources/${source.id}`, {
        token: w.admin.token,
      });
      expect(removed.status).toBe(204);
      // A session is ended with DELETE; a 2026-07-28 connection has none to end.
      expect(count(await seenFor(source.id), "DELETE")).toBe(mode === "session" ? 1 : 0);
      expect((await listener(source.id)).job).toBeUndefined();
    },
  );

  it("stateless mode: a server without sessions (its GET stream open but silent) is polled, not held", async () => {
    const w = await funded();
    const source = await v2Source(w.orgId, w.admin.token, "stateless");
    const { listen, job } = await listener(source.id);
    expect(listen).toMatchObject({ mode: "poll", attempt: 0 });
    expect(job?.time).toBeGreaterThan(Date.now() + 59 * 60_000);
    expect(job?.time).toBeLessThan(Date.now() + 61 * 60_000);

    await changeTools(source.id, { add: ["polled_in"] });
    const stub = sourceClient(env, source.id);
    await runInDurableObject(stub, (object: ToolSourceClient) =>
      object.lifecycle.jobs.reschedule("listen", Date.now()),
    );
    await runDurableObjectAlarm(stub);
    expect(await namesUntil(source.id, w.admin.token, (n) => n.includes("polled_in"))).toContain(
      "polled_in",
    );
    expect((await listener(source.id)).listen).toMatchObject({ mode: "poll", attempt: 0 });

    const removed = await api("DELETE", `/api/tool-sources/${source.id}`, {
      token: w.admin.token,
    });
    expect(removed.status).toBe(204);
    // No session, no DELETE (the SDK's stateless transport would answer it 405).
    expect(count(await seenFor(source.id), "DELETE")).toBe(0);
    expect((await listener(source.id)).job).toBeUndefined();
  });
});
