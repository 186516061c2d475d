import { env, runInDurableObject } from "cloudflare:test";
import { devReply } from "@parley/dev-model/reply";
import { describe, expect, it } from "vitest";
import type { AssistantAgent } from "../src/agents/assistant-agent.ts";
import { billingAccount } from "../src/billing/account.ts";
import { type ChatSocket, mustConnect } from "./chat.ts";
import { api } from "./helpers.ts";
import {
  forgetAccess,
  funded,
  latestCallMaximum,
  modelRequests,
  settledBalance,
  usageRowsOf,
} from "./metering.ts";
import { allowModels, makeProfile, pickModel, requestsWith, useForProject } from "./turn-models.ts";

/**
 * The assistant's hot path (docs/2026-11-29-performance.md): the first call's hold is reserved while
 * the membership check and the SDK's write of the message run, a turn's last settlement does not hold
 * up the reply, and a lone connection's message is not sent with the whole transcript. Each shortcut
 * must keep the guarantees of the slow path.
 */

const agentPath = (sessionId: string) => `/agents/assistant-agent/${sessionId}`;
const stub = (sessionId: string) =>
  env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(sessionId));

/** What the first call of a slow reply to `text` drew (its maximum cost), read while it streams. */
async function holdWhileStreaming(chat: ChatSocket, sessionId: string, text: string) {
  const id = crypto.randomUUID();
  const from = chat.frames.length;
  chat.request(id, `${text} [[tps:20]]`);
  await chat.waitForText(id, from);
  const held = await latestCallMaximum(sessionId);
  await chat.result(id, from);
  return held;
}

describe("the first call's hold", () => {
  it("is given back when the member was removed since the last turn, and no model is called", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    // A first turn: the object now knows the project, so the next hold starts before the check.
    expect((await chat.turn("hello")).text).toBe(devReply("hello"));
    // Removed behind the API's back (the push that closes their sockets never came), and the
    // access the agent kept has lapsed (as it does after AUTHZ_CACHE_MS): the next turn reads D1.
    await env.DB.prepare("DELETE FROM memberships WHERE org_id = ? AND user_id = ?")
      .bind(w.orgId, w.member.id)
      .run();
    await forgetAccess(w.sessionId);
    const before = await settledBalance(w.orgId);
    const calls = await modelRequests();
    const id = crypto.randomUUID();
    const refused = await chat.turn("still here?", { id });
    expect(refused.parleyError?.code).toBe("not_found");
    expect(await modelRequests()).toBe(calls);
    const after = await settledBalance(w.orgId);
    expect(after).toMatchObject({ heldMicros: 0, postedMicros: before.postedMicros });
    // Only the first turn was recorded; the refused one's early hold was released.
    expect(await usageRowsOf(w.orgId, (row) => row.sessionId === w.sessionId, 1)).toHaveLength(1);
    expect((await billingAccount(env, w.orgId).reconcile()).ok).toBe(true);
    await runInDurableObject(stub(w.sessionId), (_instance: AssistantAgent, state) => {
      const steps = state.storage.sql
        .exec("SELECT status FROM parley_steps ORDER BY created_at, rowid")
        .toArray();
      expect(steps).toEqual([{ status: "settled" }, { status: "released" }]);
    });
  });

  it("is sized on the project memory as it is now, not as the last turn saw it", async () => {
    const w = await funded(1_000_000_000);
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const small = await holdWhileStreaming(chat, w.sessionId, "first");
    // The memory grows by about 3,900 tokens (near the 16 KiB cap on memory) between two turns.
    const memory = { notes: "n".repeat(15_500) };
    const patched = await api("PATCH", `/api/projects/${w.projectId}`, {
      token: w.member.token,
      body: { memory },
    });
    expect(patched.status).toBe(200);
    const large = await holdWhileStreaming(chat, w.sessionId, "second");
    // The dev model's price is $1 per million prompt tokens (1 micro each), plus the 20% markup.
    expect(large - small).toBeGreaterThanOrEqual(3_500);
    chat.close();
  });
});

describe("settlement off the reply's path", () => {
  it("usage a reset kept from the BillingAccount is sent when the object starts again", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    await chat.turn("warm up");
    chat.close();
    const requestId = `${crypto.randomUUID()}:0`;
    // As if the object was reset between storing a step's usage and the settle RPC.
    const attribution = { memberId: w.member.id, projectId: w.projectId, sessionId: w.sessionId };
    const hold = await billingAccount(env, w.orgId).reserve({
      requestId,
      amountMicros: 500,
      ...attribution,
    });
    expect(hold.ok).toBe(true);
    await runInDurableObject(stub(w.sessionId), async (_instance: AssistantAgent, state) => {
      state.storage.sql.exec(
        "INSERT INTO parley_pending_usage (request_id, org_id, payload) VALUES (?, ?, ?)",
        requestId,
        w.orgId,
        JSON.stringify({
          requestId,
          costMicros: 100,
          priceMicros: 120,
          tokens: {
            promptTokens: 10,
            completionTokens: 5,
            cachedPromptTokens: 0,
            reasoningTokens: 0,
          },
          model: "parley/dev",
          generationIds: [],
          billable: true,
          attribution,
        }),
      );
      await state.storage.sync();
    });
    await runInDurableObject(stub(w.sessionId), (_instance, state) =>
      state.abort("test: reset before the settle"),
    ).catch(() => undefined);
    const again = await mustConnect(agentPath(w.sessionId), w.member.token);
    const [row] = await usageRowsOf(w.orgId, (r) => r.requestId === requestId, 1);
    expect(row).toMatchObject({ requestId, priceMicros: 120, memberId: w.member.id });
    expect((await settledBalance(w.orgId)).heldMicros).toBe(0);
    // Landed once, and the local copy is gone.
    await new Promise((r) => setTimeout(r, 200));
    expect(await usageRowsOf(w.orgId, (r) => r.requestId === requestId, 1)).toHaveLength(1);
    await runInDurableObject(stub(w.sessionId), (_instance: AssistantAgent, state) => {
      expect(state.storage.sql.exec("SELECT * FROM parley_pending_usage").toArray()).toEqual([]);
    });
    again.close();
  });
});

describe("a message from a lone connection", () => {
  it("is appended to the stored transcript, and a second connection still gets the whole of it", async () => {
    const w = await funded();
    const first = await mustConnect(agentPath(w.sessionId), w.member.token);
    await first.turn("one");
    await first.turn("two");
    const second = await mustConnect(agentPath(w.sessionId), w.member.token);
    const from = second.frames.length;
    await first.turn("three");
    // With another connection open, the SDK shows it the request's messages: all of them.
    const shown = await second.waitFor((f) => f.type === "cf_agent_chat_messages", 5_000, from);
    expect((shown.messages as unknown[]).length).toBeGreaterThanOrEqual(5);
    second.close();
    await first.turn("four");
    const stored = await api<{ role: string }[]>("GET", `${agentPath(w.sessionId)}/get-messages`, {
      token: w.member.token,
    });
    expect(stored.body.map((m) => m.role)).toEqual(Array(4).fill(["user", "assistant"]).flat());
    first.close();
  });
});

describe("a turn in a long session", () => {
  /** Rows the object's SQLite wrote while `run` ran (every statement goes through storage.sql.exec). */
  async function rowsWrittenDuring(sessionId: string, run: () => Promise<unknown>) {
    const cursors: { rowsWritten: number }[] = [];
    await runInDurableObject(stub(sessionId), (_instance: AssistantAgent, state) => {
      const sql = state.storage.sql;
      const exec = sql.exec.bind(sql);
      Object.assign(sql, {
        exec: (...args: Parameters<typeof sql.exec>) => {
          const cursor = exec(...args);
          cursors.push(cursor);
          return cursor;
        },
      });
    });
    await run();
    // Metering runs after the reply (its report a moment later): let it land before counting.
    await new Promise((r) => setTimeout(r, 1_300));
    return cursors.reduce((sum, cursor) => sum + cursor.rowsWritten, 0);
  }

  it("writes as many SQLite rows at 200 stored messages as at 10", async () => {
    const w = await funded(1_000_000_000);
    const { session } = await import("./helpers.ts");
    const longId = await session(w.projectId, w.orgId, w.member.id);
    const short = await mustConnect(agentPath(w.sessionId), w.member.token);
    const long = await mustConnect(agentPath(longId), w.member.token);
    for (let i = 0; i < 5; i++) await short.turn(`short ${i}`);
    for (let i = 0; i < 100; i++) await long.turn(`long ${i}`);
    // Each measured turn starts from the same lease state: everything drawn reported and the lease
    // renewed. Otherwise a renewal (a row per call it reports) lands in one turn and not the other
    // by the count of steps, and under load the hundred long turns outlast the short session's
    // idle time, so its measured turn opened a new lease.
    const reported = (sessionId: string) =>
      runInDurableObject(stub(sessionId), (instance: AssistantAgent) => instance.reportUsage());
    await reported(w.sessionId);
    const atTen = await rowsWrittenDuring(w.sessionId, () => short.turn("measured [[tokens:8]]"));
    await reported(longId);
    const atTwoHundred = await rowsWrittenDuring(longId, () => long.turn("measured [[tokens:8]]"));
    expect(atTen).toBeGreaterThan(0);
    // A frame path that rewrites the history adds about 190 rows.
    expect(Math.abs(atTwoHundred - atTen), `${atTen} vs ${atTwoHundred}`).toBeLessThanOrEqual(4);
    short.close();
    long.close();
  }, 60_000);
});

/**
 * Counts, while `run` runs, what the session agent's bindings are asked: D1 statements prepared,
 * batched or executed, and BillingAccount stubs made (every call to an org's account goes through
 * `billingAccount(env, orgId)`, one stub each). The agent's `env` may be shared with other objects
 * of the isolate: their use counts too, so a zero is a true zero.
 */
async function countingBindings(
  sessionId: string,
  run: () => Promise<void>,
): Promise<{ d1: number; billing: number }> {
  const counts = { d1: 0, billing: 0 };
  type Methods = Record<string, (...args: unknown[]) => unknown>;
  const restore: (() => void)[] = [];
  await runInDurableObject(stub(sessionId), (instance: AssistantAgent) => {
    const agentEnv = (instance as unknown as { env: Env }).env;
    const wrap = (target: Methods, method: string, key: "d1" | "billing") => {
      const original = target[method] as (...args: unknown[]) => unknown;
      target[method] = (...args: unknown[]) => {
        counts[key] += 1;
        return original.apply(target, args);
      };
      restore.push(() => {
        target[method] = original;
      });
    };
    const db = agentEnv.DB as unknown as Methods;
    for (const method of ["prepare", "batch", "exec"]) wrap(db, method, "d1");
    wrap(agentEnv.BILLING as unknown as Methods, "get", "billing");
  });
  try {
    await run();
    return counts;
  } finally {
    await runInDurableObject(stub(sessionId), () => {
      for (const undo of restore) undo();
    });
  }
}

describe("a steady-state turn (issue 14)", () => {
  /** Sends `text` and counts the bindings' use until its first token arrives. */
  async function untilFirstToken(chat: ChatSocket, sessionId: string, text: string) {
    const id = crypto.randomUUID();
    const from = chat.frames.length;
    const counted = await countingBindings(sessionId, async () => {
      chat.request(id, `${text} [[tokens:8]]`);
      await chat.waitForText(id, from);
    });
    await chat.result(id, from);
    return counted;
  }

  it("makes no BillingAccount call and no D1 query before its first model call", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    // The first turn opens the session's lease and reads the caller's access once.
    const first = await untilFirstToken(chat, w.sessionId, "first");
    expect(first.d1 + first.billing).toBeGreaterThan(0);
    // From then on a turn's money and rights are local: the lease and the access the agent keeps.
    for (const text of ["second", "third"]) {
      const steady = await untilFirstToken(chat, w.sessionId, text);
      expect({ d1: steady.d1, billing: steady.billing }).toEqual({ d1: 0, billing: 0 });
    }
    // A push (here, the project's memory edited) makes the agent read the access again, then, off
    // any turn's path; the turn after it reads nothing either.
    const push = await countingBindings(w.sessionId, async () => {
      const patched = await api("PATCH", `/api/projects/${w.projectId}`, {
        token: w.member.token,
        body: { memory: { tone: "brief" } },
      });
      expect(patched.status).toBe(200);
    });
    expect(push.d1).toBeGreaterThan(0);
    const afterPush = await untilFirstToken(chat, w.sessionId, "fourth");
    expect({ d1: afterPush.d1, billing: afterPush.billing }).toEqual({ d1: 0, billing: 0 });
    // Every call was settled, and the usage reached the account.
    expect(await usageRowsOf(w.orgId, (row) => row.sessionId === w.sessionId, 4)).toHaveLength(4);
    chat.close();
  }, 30_000);

  it("reads nothing either with a profile of the org's and a model picked for the session: what the turn resolves to is kept, and read again off the turn's path after a push", async () => {
    const w = await funded();
    await allowModels(w, ["parley/dev", "parley/dev-fast", "parley/dev-large"]);
    await useForProject(
      w,
      await makeProfile(w, { instructions: "Be brief.", model: "parley/dev" }),
    );
    await pickModel(w, "parley/dev-large");
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    await untilFirstToken(chat, w.sessionId, "first [[latency:0]]");
    for (const text of ["second", "third"]) {
      const steady = await untilFirstToken(chat, w.sessionId, `${text} [[latency:0]]`);
      expect({ d1: steady.d1, billing: steady.billing }).toEqual({ d1: 0, billing: 0 });
    }
    // The session's model changes: the push re-reads it, and the next turn runs it, reading
    // nothing (a cheaper model: its calls fit the lease drawn for the dearer one's).
    const push = await countingBindings(w.sessionId, () => pickModel(w, "parley/dev-fast"));
    expect(push.d1).toBeGreaterThan(0);
    const marker = crypto.randomUUID();
    const afterPush = await untilFirstToken(chat, w.sessionId, `fourth ${marker} [[latency:0]]`);
    expect({ d1: afterPush.d1, billing: afterPush.billing }).toEqual({ d1: 0, billing: 0 });
    expect((await requestsWith(marker)).map((request) => request.model)).toEqual([
      "parley/dev-fast",
    ]);
    chat.close();
  }, 30_000);
});
