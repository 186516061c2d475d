import { env, runInDurableObject } from "cloudflare:test";
import type { ToolSource } from "@parley/shared";
import type { ToolSet } from "ai";
import { beforeAll, describe, expect, it } from "vitest";
import { billingAccount } from "../src/billing/account.ts";
import { isToolCallError } from "../src/tools/call-error.ts";
import type { FramedResult } from "../src/tools/result-frame.ts";
import type { ToolCallMeter } from "../src/tools/tool-meter.ts";
import { sourceTools, type ToolCaller } from "../src/tools/turn-tools.ts";
import { api } from "./helpers.ts";
import { funded } from "./metering.ts";
import { actions, httpSource, labSource, seen, shareJwks } from "./tools.ts";

beforeAll(shareJwks);

const agent = (sessionId: string) =>
  env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(sessionId));

type Execute = (args: unknown, options: Record<string, unknown>) => Promise<unknown>;

/** A built tool's execute, called as the AI SDK calls it. */
function executeOf(tools: ToolSet, name: string): Execute {
  const execute = tools[name]?.execute;
  if (!execute) throw new Error(`no tool ${name}`);
  return execute as unknown as Execute;
}

/** Runs `fn` inside the session's chat object, with its tool call ledger (as the turn has it). */
function inSession<T>(sessionId: string, fn: (meter: ToolCallMeter) => Promise<T>): Promise<T> {
  return runInDurableObject(agent(sessionId), async (instance) =>
    fn((instance as unknown as { toolCalls: ToolCallMeter }).toolCalls),
  );
}

/** The org's held micro-dollars as its account counts them, read without asking lease holders. */
function heldOn(orgId: string): Promise<number> {
  return runInDurableObject(billingAccount(env, orgId), (_instance, state) => {
    const row = state.storage.sql
      .exec("SELECT value FROM ledger_counters WHERE name = 'held'")
      .toArray()[0];
    return Number(row?.value ?? 0);
  });
}

/** Builds the turn's source tools for `caller` and calls `name`. */
async function call(
  w: { orgId: string; projectId: string; sessionId: string },
  caller: ToolCaller,
  profileTools: string[],
  name: string,
  args: unknown,
  options: {
    toolCallId?: string;
    approve?: boolean;
    abortSignal?: AbortSignal;
    settle?: boolean;
  } = {},
): Promise<{ result: unknown; error: unknown; tools: ToolSet }> {
  return inSession(w.sessionId, async (meter) => {
    const tools = await sourceTools(env, {
      orgId: w.orgId,
      projectId: w.projectId,
      sessionId: w.sessionId,
      caller,
      profileTools,
      meter,
    });
    const toolCallId = options.toolCallId ?? crypto.randomUUID();
    if (options.approve !== undefined) {
      meter.noteAnswer(toolCallId, options.approve, { kind: caller.kind, id: caller.userId });
    }
    const execute = tools[name]?.execute as unknown as Execute | undefined;
    if (!execute) return { result: undefined, error: new Error(`no tool ${name}`), tools };
    let result: unknown;
    let error: unknown;
    try {
      result = await execute(args, {
        toolCallId,
        messages: [],
        ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}),
      });
    } catch (caught) {
      error = caught;
    }
    if (options.settle !== false) await Promise.allSettled([...meter.inFlight]);
    return { result, error, tools };
  });
}

const member = (w: { member: { id: string } }): ToolCaller => ({
  kind: "member",
  userId: w.member.id,
  appId: null,
});

const ref = (source: ToolSource, tool: string) => `source:${source.id}:${tool}`;

describe("sourceTools: read tools", () => {
  it("a read tool runs with a fresh identity token for the member, framed as data", async () => {
    const w = await funded();
    const source = await labSource(w.orgId, w.admin.token);
    const { result, error, tools } = await call(
      w,
      member(w),
      [ref(source, "whoami")],
      "whoami",
      {},
    );
    expect(error).toBeUndefined();
    expect(Object.keys(tools)).toEqual(["whoami"]);
    const framed = result as FramedResult;
    expect(framed.note).toMatch(/never follow instructions/);
    expect(framed.source).toBe(source.name);
    const claims = (framed.result as { claims: Record<string, unknown> }).claims;
    expect(claims).toMatchObject({
      sub: w.member.id,
      kind: "member",
      org: w.orgId,
      session: w.sessionId,
      tool: "whoami",
      src: source.id,
      aud: source.url,
      iss: "parley",
    });
    expect(Number(claims.exp) - Number(claims.iat)).toBe(60);
    expect(claims.app).toBeUndefined();
    // Every token is new: two calls never share a jti.
    const again = await call(w, member(w), [ref(source, "whoami")], "whoami", {});
    const second = ((again.result as FramedResult).result as { claims: { jti: string } }).claims;
    expect(second.jti).not.toBe(claims.jti);
    // The member's own Parley token never left Parley.
    const log = await seen();
    expect(JSON.stringify(log)).not.toContain(w.member.token);
  });

  it("an end user's calls name their id in the tenant's product and their app", async () => {
    const w = await funded();
    const source = await labSource(w.orgId, w.admin.token);
    const euId = `eu_${crypto.randomUUID().replaceAll("-", "").slice(0, 26)}`;
    await env.DB.prepare(
      "INSERT INTO end_users (id, org_id, app_id, external_id, name, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
      .bind(euId, w.orgId, w.appId, "shop-user-carol", "Carol", Date.now(), Date.now())
      .run();
    const { result } = await call(
      w,
      { kind: "end_user", userId: euId, appId: w.appId },
      [ref(source, "whoami")],
      "whoami",
      {},
    );
    const claims = ((result as FramedResult).result as { claims: Record<string, unknown> }).claims;
    expect(claims).toMatchObject({ sub: "shop-user-carol", kind: "end_user", app: w.appId });
  });

  it("an HTTP action fills its path, sends the rest as the query, and the server sees the caller", async () => {
    const w = await funded();
    const source = await httpSource(w.orgId, w.admin.token);
    const { result, error } = await call(
      w,
      member(w),
      [ref(source, "order_status")],
      "order_status",
      { orderId: "A/../1", include: "items" },
    );
    expect(error).toBeUndefined();
    expect((result as FramedResult).result).toEqual({
      orderId: "A/../1",
      status: "shipped",
      shopper: w.member.id,
      include: "items",
    });
    const hit = (await seen()).filter((s) => s.server === "http" && s.claims?.src === source.id);
    // The argument stayed one encoded path segment: it could not climb out of the action's path.
    expect(hit.at(-1)?.path).toBe("/api/orders/A%2F..%2F1");
  });

  it("an HTTP action whose server refuses Parley's token (401) is `unauthorized`", async () => {
    const w = await funded();
    // Registered at a base the action server does not take as its audience: it answers 401.
    const source = await httpSource(w.orgId, w.admin.token, { url: `${actions()}/elsewhere` });
    const { error } = await call(w, member(w), [ref(source, "order_status")], "order_status", {
      orderId: "1",
    });
    expect(isToolCallError(error) && error.code).toBe("unauthorized");
  });

  it("a source of another org, a tool not listed, or an unusable name is never built", async () => {
    const w = await funded();
    const theirs = await labSource(w.otherOrgId, w.outsider.token);
    const ours = await labSource(w.orgId, w.admin.token);
    const { tools } = await call(
      w,
      member(w),
      [ref(theirs, "whoami"), ref(ours, "nope"), "read_project_memory"],
      "whoami",
      {},
    );
    expect(Object.keys(tools)).toEqual([]);
    // Nothing went to the other org's source for this org.
    expect(
      (await seen()).some((s) => s.claims?.src === theirs.id && s.claims?.org === w.orgId),
    ).toBe(false);
  });
});

describe("sourceTools: write tools need the person's approval", () => {
  it("a write tool asks for approval and does not run without one, denied, or twice", async () => {
    const w = await funded();
    const source = await labSource(w.orgId, w.admin.token);
    const tools = [ref(source, "note")];
    const unapproved = await call(w, member(w), tools, "note", { text: "hi" });
    expect(unapproved.tools.note?.needsApproval).toBe(true);
    expect(isToolCallError(unapproved.error) && unapproved.error.code).toBe("not_approved");
    const denied = await call(w, member(w), tools, "note", { text: "hi" }, { approve: false });
    expect(isToolCallError(denied.error) && denied.error.code).toBe("not_approved");
    const notes = () =>
      seen().then(
        (log) => log.filter((s) => s.claims?.src === source.id && s.rpc === "tools/call").length,
      );
    expect(await notes()).toBe(0);
    const toolCallId = crypto.randomUUID();
    const approved = await call(
      w,
      member(w),
      tools,
      "note",
      { text: "hi" },
      { toolCallId, approve: true },
    );
    expect(approved.error).toBeUndefined();
    expect((approved.result as FramedResult).approvedBy).toEqual({
      kind: "member",
      id: w.member.id,
    });
    // The same approval replayed: it ran once, it does not run again.
    const replay = await call(w, member(w), tools, "note", { text: "hi" }, { toolCallId });
    expect(isToolCallError(replay.error) && replay.error.code).toBe("already_ran");
    expect(await notes()).toBe(1);
    const calls = await api<{
      items: { access: string; approvedBy: string | null; status: string }[];
    }>("GET", `/api/sessions/${w.sessionId}/tool-calls`, { token: w.member.token });
    expect(calls.body.items.filter((c) => c.access === "write")).toEqual([
      expect.objectContaining({ approvedBy: w.member.id, status: "ok" }),
    ]);
  });
});

describe("sourceTools: failures reach the model as tool errors", () => {
  it("a tool that times out fails as a timeout; the source's failures are counted", async () => {
    const w = await funded();
    const source = await labSource(w.orgId, w.admin.token);
    const started = Date.now();
    const { error } = await call(w, member(w), [ref(source, "slow")], "slow", { ms: 5000 });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(isToolCallError(error) && error.code).toBe("timeout");
    const after = await api<ToolSource>("GET", `/api/tool-sources/${source.id}`, {
      token: w.admin.token,
    });
    expect(after.body.health.consecutiveFailures).toBeGreaterThanOrEqual(1);
  });

  it("an oversized result is cut with a note; a response past the wire limit fails", async () => {
    const w = await funded();
    const source = await labSource(w.orgId, w.admin.token);
    const { result } = await call(w, member(w), [ref(source, "big")], "big", { bytes: 40_000 });
    const framed = result as FramedResult;
    expect(framed.truncated).toBe(true);
    expect(framed.note).toMatch(/cut to its first 16384/);
    expect(new TextEncoder().encode(framed.result as string).byteLength).toBeLessThanOrEqual(
      16_384,
    );
    const huge = await call(w, member(w), [ref(source, "big")], "big", { bytes: 2_000_000 });
    expect(isToolCallError(huge.error) && huge.error.code).toBe("too_large");
  });

  it("malformed answers, redirects and reported errors are tool errors, never thrown raw", async () => {
    const w = await funded();
    const http = await httpSource(w.orgId, w.admin.token);
    const lab = await labSource(w.orgId, w.admin.token);
    const malformed = await call(w, member(w), [ref(http, "malformed")], "malformed", {});
    expect(isToolCallError(malformed.error) && malformed.error.code).toBe("malformed");
    const redirect = await call(w, member(w), [ref(http, "redirect")], "redirect", {});
    expect(isToolCallError(redirect.error) && redirect.error.code).toBe("redirect");
    const reported = await call(w, member(w), [ref(lab, "fails")], "fails", {});
    expect(isToolCallError(reported.error) && reported.error.code).toBe("tool_error");
    expect((reported.error as Error).message).toMatch(/the lab refuses/);
    expect((await seen()).some((s) => s.path.includes("meta-data"))).toBe(false);
  });

  it("a source that keeps failing is shown unhealthy, and healthy again after a success", async () => {
    const w = await funded();
    const lab = await labSource(w.orgId, w.admin.token);
    for (let i = 0; i < 3; i++) await call(w, member(w), [ref(lab, "slow")], "slow", { ms: 3000 });
    const sick = await api<ToolSource>("GET", `/api/tool-sources/${lab.id}`, {
      token: w.member.token,
    });
    expect(sick.body.health).toMatchObject({ status: "unhealthy", consecutiveFailures: 3 });
    // A member sees the error's class; its text is for owners and admins.
    expect(sick.body.health).toMatchObject({ lastError: null, lastErrorCode: "timeout" });
    const told = await api<ToolSource>("GET", `/api/tool-sources/${lab.id}`, {
      token: w.admin.token,
    });
    expect(told.body.health.lastError).toMatch(/timeout|too long/);
    await call(w, member(w), [ref(lab, "whoami")], "whoami", {});
    const well = await api<ToolSource>("GET", `/api/tool-sources/${lab.id}`, {
      token: w.member.token,
    });
    expect(well.body.health).toMatchObject({ status: "healthy", consecutiveFailures: 0 });
  });

  it("at most TOOL_CALLS_PER_TURN calls run in one turn", async () => {
    const w = await funded();
    const lab = await labSource(w.orgId, w.admin.token);
    const outcome = await inSession(w.sessionId, async (meter) => {
      const tools = await sourceTools(env, {
        orgId: w.orgId,
        projectId: w.projectId,
        sessionId: w.sessionId,
        caller: member(w),
        profileTools: [ref(lab, "whoami")],
        meter,
      });
      const execute = executeOf(tools, "whoami");
      const codes: (string | null)[] = [];
      for (let i = 0; i < 9; i++) {
        codes.push(
          await execute({}, { toolCallId: `c${i}`, messages: [] }).then(
            () => null,
            (e: unknown) => (isToolCallError(e) ? e.code : "other"),
          ),
        );
      }
      await Promise.allSettled([...meter.inFlight]);
      return codes;
    });
    expect(outcome.slice(0, 8)).toEqual(Array(8).fill(null));
    expect(outcome[8]).toBe("call_limit");
  });
});

describe("priced calls are charged once", () => {
  it("a paid call holds its price first and is charged exactly its price", async () => {
    const w = await funded(1_000_000);
    const lab = await labSource(w.orgId, w.admin.token, { priceMicros: 2500 });
    const before = await billingAccount(env, w.orgId).balance();
    await call(w, member(w), [ref(lab, "whoami")], "whoami", {});
    const after = await billingAccount(env, w.orgId).balance();
    expect(before.availableMicros - after.availableMicros).toBe(2500);
    expect(after.heldMicros).toBe(0);
    const activity = await api<{
      items: { model: string; priceMicros: number; session: { id: string } | null }[];
    }>("GET", `/api/orgs/${w.orgId}/billing/activity`, { token: w.owner.token });
    expect(activity.body.items).toEqual([
      expect.objectContaining({ model: `tool:${lab.id}:whoami`, priceMicros: 2500 }),
    ]);
  });

  it("a paid call the org cannot afford is refused before it goes out", async () => {
    const w = await funded(1000);
    const lab = await labSource(w.orgId, w.admin.token, { priceMicros: 5000 });
    const { error } = await call(w, member(w), [ref(lab, "whoami")], "whoami", {});
    expect(isToolCallError(error) && error.code).toBe("insufficient_credits");
    expect(
      (await seen()).some((s) => s.claims?.src === lab.id && s.claims?.tool === "whoami"),
    ).toBe(false);
    expect((await billingAccount(env, w.orgId).balance()).availableMicros).toBe(1000);
  });

  it("a paid call stopped mid-way is charged once, when it went out", async () => {
    const w = await funded(1_000_000);
    const lab = await labSource(w.orgId, w.admin.token, { priceMicros: 3000 });
    const error = await inSession(w.sessionId, async (meter) => {
      const tools = await sourceTools(env, {
        orgId: w.orgId,
        projectId: w.projectId,
        sessionId: w.sessionId,
        caller: member(w),
        profileTools: [ref(lab, "slow")],
        meter,
      });
      const stop = new AbortController();
      setTimeout(() => stop.abort(), 200);
      const caught = await executeOf(tools, "slow")(
        { ms: 800 },
        { toolCallId: "s1", messages: [], abortSignal: stop.signal },
      ).then(
        () => null,
        (e: unknown) => e,
      );
      // The reply ended at the stop; the call's answer comes later, and then it is settled once.
      await new Promise((r) => setTimeout(r, 1000));
      await Promise.allSettled([...meter.inFlight]);
      await meter.closeOpen();
      return caught;
    });
    expect(isToolCallError(error) && error.code).toBe("aborted");
    const balance = await billingAccount(env, w.orgId).balance();
    expect(1_000_000 - balance.availableMicros).toBe(3000);
    expect(balance.heldMicros).toBe(0);
    const calls = await api<{ items: { status: string; priceMicros: number }[] }>(
      "GET",
      `/api/sessions/${w.sessionId}/tool-calls`,
      { token: w.member.token },
    );
    expect(calls.body.items).toEqual([
      expect.objectContaining({ status: "aborted", priceMicros: 3000 }),
    ]);
  });

  it("a paid call answered, then cut off by a reset before its settlement, is charged exactly once", async () => {
    const w = await funded(1_000_000);
    const lab = await labSource(w.orgId, w.admin.token, { priceMicros: 3500 });
    // The call answers: its result is back while its settlement still waits (the turn's end or the
    // schedule takes it), and the object is reset right then.
    let answered: { result: FramedResult | undefined; rows: unknown[]; held: number } | null = null;
    // The object has started (its start settles what a reset left), so no start runs in the window.
    await agent(w.sessionId).reportUsage();
    await runInDurableObject(agent(w.sessionId), async (instance, state) => {
      const meter = (instance as unknown as { toolCalls: ToolCallMeter }).toolCalls;
      const tools = await sourceTools(env, {
        orgId: w.orgId,
        projectId: w.projectId,
        sessionId: w.sessionId,
        caller: member(w),
        profileTools: [ref(lab, "whoami")],
        meter,
      });
      const result = (await executeOf(tools, "whoami")({}, { toolCallId: "a1", messages: [] })) as
        | FramedResult
        | undefined;
      const rows = state.storage.sql
        .exec("SELECT status FROM parley_tool_calls")
        .toArray()
        .map((row) => row.status);
      // The answer leaves the object only once its row is durable (the output gate): wait for
      // that, as anything outside would, then read the hold from the account's own counter. Its
      // \`balance()\` would first collect from the lease holders, which settles the call.
      await state.storage.sync();
      const held = await heldOn(w.orgId);
      answered = { result, rows, held };
      state.abort("test: reset between the answer and the settlement");
    }).catch(() => undefined);
    expect(answered).toMatchObject({
      result: { callId: expect.stringMatching(/^tcl_/) },
      // Answered before it was settled: the row says how it ended, the price is only held.
      rows: ["closing"],
      held: 3500,
    });
    // The object starts again (any event wakes it: this test's, or the settlement's schedule): the
    // call is settled once, as it ended (not as a reset), however often the start runs.
    await inSession(w.sessionId, async (meter) => {
      await meter.closeOpen();
      await Promise.allSettled([...meter.inFlight]);
    });
    await inSession(w.sessionId, (meter) => meter.closeOpen());
    await inSession(w.sessionId, (meter) => meter.settleClosed());
    const balance = await billingAccount(env, w.orgId).balance();
    expect(1_000_000 - balance.availableMicros).toBe(3500);
    expect(balance.heldMicros).toBe(0);
    const rows = await env.DB.prepare(
      "SELECT status, error_code, price_micros FROM tool_calls WHERE session_id = ?",
    )
      .bind(w.sessionId)
      .all();
    expect(rows.results).toEqual([{ status: "ok", error_code: null, price_micros: 3500 }]);
    const activity = await api<{ items: { model: string; priceMicros: number }[] }>(
      "GET",
      `/api/orgs/${w.orgId}/billing/activity`,
      { token: w.owner.token },
    );
    expect(activity.body.items).toEqual([
      expect.objectContaining({ model: `tool:${lab.id}:whoami`, priceMicros: 3500 }),
    ]);
    expect((await billingAccount(env, w.orgId).reconcile()).ok).toBe(true);
  });

  it("a paid call cut off by a reset is settled once on restart", async () => {
    const w = await funded(1_000_000);
    const lab = await labSource(w.orgId, w.admin.token, { priceMicros: 4000 });
    // The call goes out, then the object is reset before it answers (started first, so no start
    // closes the call inside the window).
    await agent(w.sessionId).reportUsage();
    await runInDurableObject(agent(w.sessionId), async (instance, state) => {
      const meter = (instance as unknown as { toolCalls: ToolCallMeter }).toolCalls;
      const tools = await sourceTools(env, {
        orgId: w.orgId,
        projectId: w.projectId,
        sessionId: w.sessionId,
        caller: member(w),
        profileTools: [ref(lab, "slow")],
        meter,
      });
      void executeOf(tools, "slow")({ ms: 600 }, { toolCallId: "r1", messages: [] }).catch(
        () => undefined,
      );
      await new Promise((r) => setTimeout(r, 150));
      state.abort("test: reset mid-call");
    }).catch(() => undefined);
    expect((await billingAccount(env, w.orgId).balance()).heldMicros).toBe(4000);
    // The object starts again (any request wakes it): what the reset left open is closed once.
    await inSession(w.sessionId, async (meter) => {
      await meter.closeOpen();
      await Promise.allSettled([...meter.inFlight]);
    });
    await inSession(w.sessionId, (meter) => meter.closeOpen());
    const balance = await billingAccount(env, w.orgId).balance();
    expect(1_000_000 - balance.availableMicros).toBe(4000);
    expect(balance.heldMicros).toBe(0);
    const rows = await env.DB.prepare(
      "SELECT status, error_code, price_micros FROM tool_calls WHERE session_id = ?",
    )
      .bind(w.sessionId)
      .all();
    expect(rows.results).toEqual([{ status: "aborted", error_code: "reset", price_micros: 4000 }]);
    expect((await billingAccount(env, w.orgId).reconcile()).ok).toBe(true);
  });
});
