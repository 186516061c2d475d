import { env } from "cloudflare:test";
import type { Connection } from "agents";
import { describe, expect, it } from "vitest";
import { ConnectionRegistry } from "../src/agents/connections.ts";
import { endUserAgentCaller, memberAgentCaller } from "../src/agents/routing.ts";
import { SessionAccess } from "../src/agents/session-access.ts";
import { verifyAccessToken, verifyEndUserAccessToken } from "../src/auth/tokens.ts";
import { config } from "../src/env.ts";
import { countingDb, memberCaller } from "./d1-count.ts";
import { endUserToken, openSession } from "./end-users.ts";
import { type World, world } from "./helpers.ts";

/**
 * A socket's connect asks D1 who may use it twice: the Worker before it addresses the object, and
 * the agent once the socket is in the connection registry (a revocation between the two must still
 * close it). Each side asks in one round trip (`DB.batch`): under load every D1 call is an event
 * and a copy in the runtime (docs/2026-12-06-soak-memory.md, "Fewer D1 round trips").
 */

/** A registry for `w`'s session over `db`, with the session's kept access as its access check. */
function registryFor(w: World, db: D1Database) {
  const closed: number[] = [];
  const aborted: string[] = [];
  const access = new SessionAccess({ db, sessionId: () => w.sessionId, cacheMs: 60_000 });
  const registry = new ConnectionRegistry({
    env: { ...env, DB: db },
    agentName: "assistant-agent",
    name: w.sessionId,
    connections: () => [],
    callerOf: () => null,
    accessCheck: (caller) => access.reading(caller),
    abortTurnsOf: (userId) => aborted.push(userId),
    forgetAccess: () => access.forget(),
  });
  const connection = {
    id: crypto.randomUUID(),
    close: (code: number) => closed.push(code),
  } as unknown as Connection;
  return { registry, access, connection, closed, aborted };
}

const registered = (w: World, connectionId: string) =>
  env.DB.prepare("SELECT user_id FROM agent_connections WHERE name = ? AND connection_id = ?")
    .bind(w.sessionId, connectionId)
    .first<{ user_id: string }>();

describe("a socket's connect reads D1 in one round trip on each side", () => {
  it("the agent registers the socket and checks the token and the access in one batch, and keeps the access", async () => {
    const w = await world();
    const caller = await memberCaller(w);
    const { db, calls } = countingDb(env.DB);
    const { registry, access, connection, closed } = registryFor(w, db);
    await registry.register(connection, caller);
    // The row, the sign-in's liveness, the session's access: one call.
    expect(calls).toEqual(["batch:3"]);
    expect(closed).toEqual([]);
    expect((await registered(w, connection.id))?.user_id).toBe(w.member.id);
    // What the check read is kept: the next turn's access reads no D1.
    expect((await access.for(caller)).id).toBe(w.projectId);
    expect(calls).toEqual(["batch:3"]);
  });

  it("a member removed after the Worker's check is closed by the registration's own check (4403), their turns stopped", async () => {
    const w = await world();
    const caller = await memberCaller(w);
    await env.DB.prepare("DELETE FROM memberships WHERE org_id = ? AND user_id = ?")
      .bind(w.orgId, w.member.id)
      .run();
    const { db, calls } = countingDb(env.DB);
    const { registry, connection, closed, aborted } = registryFor(w, db);
    await registry.register(connection, caller);
    expect(closed).toEqual([4403]);
    expect(aborted).toEqual([w.member.id]);
    // The row was written before the rights were read (a revocation reading the registry after
    // its delete finds it): it is there.
    expect(await registered(w, connection.id)).not.toBeNull();
    // A miss looks for an erasure's tombstone: that one extra read only when refused.
    expect(calls[0]).toBe("batch:3");
  });

  it("a sign-in revoked after the Worker's check: the socket is closed to reauthenticate (1013), nothing aborted", async () => {
    const w = await world();
    const caller = await memberCaller(w);
    await env.DB.prepare("UPDATE users SET token_version = token_version + 1 WHERE id = ?")
      .bind(w.member.id)
      .run();
    const { db, calls } = countingDb(env.DB);
    const { registry, connection, closed, aborted } = registryFor(w, db);
    await registry.register(connection, caller);
    expect(calls).toEqual(["batch:3"]);
    expect(closed).toEqual([1013]);
    expect(aborted).toEqual([]);
  });

  it("the Worker checks a member's token and right to the session in one batch", async () => {
    const w = await world();
    const token = await verifyAccessToken(config(env), w.member.token);
    const { db, calls } = countingDb(env.DB);
    const caller = await memberAgentCaller(db, token, "assistant-agent", w.sessionId);
    expect(calls).toEqual(["batch:2"]);
    expect(caller).toMatchObject({
      kind: "member",
      userId: w.member.id,
      orgId: w.orgId,
      sessionId: w.sessionId,
      role: "member",
    });
    // Another's session, and a sign-in no longer good, are refused as before.
    await expect(
      memberAgentCaller(db, token, "assistant-agent", w.otherSessionId),
    ).rejects.toMatchObject({ code: "not_found" });
    await env.DB.prepare("UPDATE users SET token_version = token_version + 1 WHERE id = ?")
      .bind(w.member.id)
      .run();
    await expect(
      memberAgentCaller(db, token, "assistant-agent", w.sessionId),
    ).rejects.toMatchObject({ code: "unauthorized" });
  });

  it("the Worker checks an end user's standing and right to the session in one batch", async () => {
    const w = await world();
    const { accessToken } = await endUserToken(w, "batched");
    const { id: sessionId } = await openSession(accessToken);
    const who = await verifyEndUserAccessToken(config(env), accessToken);
    const { db, calls } = countingDb(env.DB);
    const caller = await endUserAgentCaller(db, who, "assistant-agent", sessionId);
    // The end user's row, app and erasures, and the session with its org: one call.
    expect(calls).toEqual(["batch:2"]);
    expect(caller).toMatchObject({
      kind: "end_user",
      userId: who.endUserId,
      appId: w.appId,
      orgId: w.orgId,
      projectId: w.projectId,
      sessionId,
    });
    // A member's session in the same org is another's: not found, as before.
    await expect(endUserAgentCaller(db, who, "assistant-agent", w.sessionId)).rejects.toMatchObject(
      { code: "not_found" },
    );
    // An end user whose erasure is filed has no standing: unauthorized before the session's answer.
    await env.DB.prepare(
      "INSERT INTO tombstones (subject_id, subject_type, org_id, request_id, erased_at) VALUES (?, 'end_user', ?, 'ers_test', ?)",
    )
      .bind(who.endUserId, w.orgId, Date.now())
      .run();
    await expect(endUserAgentCaller(db, who, "assistant-agent", sessionId)).rejects.toMatchObject({
      code: "unauthorized",
    });
  });
});
