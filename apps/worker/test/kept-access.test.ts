import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AssistantAgent } from "../src/agents/assistant-agent.ts";
import { KeptRows } from "../src/agents/kept-rows.ts";
import { SessionAccess } from "../src/agents/session-access.ts";
import { turnContext } from "../src/agents/turn-model.ts";
import { TurnResolver } from "../src/assistants/resolve.ts";
import { mustConnect } from "./chat.ts";
import { countingDb, memberCaller } from "./d1-count.ts";
import { funded } from "./metering.ts";

/**
 * What an assistant session keeps of D1 between turns (its caller's access, what their turns
 * resolve to, when it last wrote its activity) outlives a hibernation: workerd evicts an idle object
 * after 10 s with its sockets kept, so at a person's pace nearly every turn starts in a new
 * instance, which used to read D1 again (agents/kept-rows.ts). A push still forgets it at once.
 * A new instance over the same SQLite stands for the object woken.
 */

const stub = (sessionId: string) =>
  env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(sessionId));

describe("a session's kept access survives hibernation, and a push still forgets it", () => {
  it("the instance woken after a read uses the kept access without reading D1", async () => {
    const w = await funded();
    const caller = await memberCaller(w);
    await runInDurableObject(stub(w.sessionId), async (_agent: AssistantAgent, state) => {
      const { db, calls } = countingDb(env.DB);
      const rows = new KeptRows(state.storage.sql);
      const access = (cacheMs = 60_000) =>
        new SessionAccess({ db, sessionId: () => w.sessionId, cacheMs, kept: rows });
      await access().read(caller);
      expect(calls).toHaveLength(1);
      // Woken: a new instance finds the access kept, reads no D1.
      expect((await access().for(caller)).id).toBe(w.projectId);
      expect(calls).toHaveLength(1);
      // Never older than the cache's age, wherever it was kept.
      expect((await access(0).for(caller)).id).toBe(w.projectId);
      expect(calls).toHaveLength(2);
    });
  });

  it("a push forgets it in the object's storage too: a member removed is refused after a wake", async () => {
    const w = await funded();
    const caller = await memberCaller(w);
    await runInDurableObject(stub(w.sessionId), async (_agent: AssistantAgent, state) => {
      const rows = new KeptRows(state.storage.sql);
      const access = () =>
        new SessionAccess({
          db: env.DB,
          sessionId: () => w.sessionId,
          cacheMs: 60_000,
          kept: rows,
        });
      const before = access();
      await before.read(caller);
      await env.DB.prepare("DELETE FROM memberships WHERE org_id = ? AND user_id = ?")
        .bind(w.orgId, w.member.id)
        .run();
      // The removal's push (connections.ts `recheckAll` calls `forgetAccess`).
      before.forget();
      await expect(access().for(caller)).rejects.toMatchObject({ code: "not_found" });
    });
  });

  it("what a turn resolves to is kept too; a push forgets it", async () => {
    const w = await funded();
    const caller = await memberCaller(w);
    const ctx = turnContext(caller, "assistant");
    await runInDurableObject(stub(w.sessionId), async (_agent: AssistantAgent, state) => {
      const { db, calls } = countingDb(env.DB);
      const rows = new KeptRows(state.storage.sql);
      const resolver = () => new TurnResolver({ ...env, DB: db }, { maxAgeMs: 60_000, kept: rows });
      const first = resolver();
      await first.refresh(ctx);
      const read = calls.length;
      expect(read).toBeGreaterThan(0);
      const woken = await resolver().resolve(ctx);
      expect(woken.ok).toBe(true);
      expect(calls).toHaveLength(read);
      first.forget();
      expect((await resolver().resolve(ctx)).ok).toBe(true);
      expect(calls.length).toBeGreaterThan(read);
    });
  });

  it("a woken session does not write its activity to D1 again within the minute", async () => {
    const w = await funded();
    const updated = () =>
      env.DB.prepare("SELECT updated_at FROM sessions WHERE id = ?")
        .bind(w.sessionId)
        .first<{ updated_at: number }>();
    const created = (await updated())?.updated_at;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const chat = await mustConnect(`/agents/assistant-agent/${w.sessionId}`, w.member.token);
    await chat.turn("one");
    // The turn's write comes after its reply, off the turn's path.
    for (let i = 0; i < 40 && (await updated())?.updated_at === created; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await updated())?.updated_at).not.toBe(created);
    await env.DB.prepare("UPDATE sessions SET updated_at = 1 WHERE id = ?").bind(w.sessionId).run();
    chat.close();
    await runInDurableObject(stub(w.sessionId), (_agent, state) =>
      state.abort("test: the object starts again"),
    ).catch(() => undefined);
    const again = await mustConnect(`/agents/assistant-agent/${w.sessionId}`, w.member.token);
    await again.turn("two");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await updated())?.updated_at).toBe(1);
    again.close();
  });
});
