import { env } from "cloudflare:test";
import type { EmbedMe, EmbedToken, EndUserWithUsage, Page } from "@parley/shared";
import { describe, expect, it } from "vitest";
import { exchange, hs256Token, secretApp } from "./apps.ts";
import { asEndUser, endUserToken, mustOpen, openSession, openSocket, PAGE } from "./end-users.ts";
import { api, BASE, errorCode, snapshot, world } from "./helpers.ts";
import { funded, returnLeases } from "./metering.ts";

/**
 * The developers' area's two routes (issue 32.1): an app's end users with their usage, and the
 * owner's or admin's own preview end user, who chats from Parley's own pages.
 */

const list = (appId: string, token: string, query = "") =>
  api<Page<EndUserWithUsage>>("GET", `/api/apps/${appId}/end-users${query}`, { token });

describe("an app's end users", () => {
  it("lists them newest first with the last 30 days' calls and charge, a page at a time", async () => {
    const w = await funded();
    const first = await endUserToken(w, "cust-1");
    const second = await endUserToken(w, "cust-2");
    // One turn by the first: their usage, not the second's.
    const session = await openSession(first.accessToken);
    const chat = await mustOpen(session.id, first.accessToken);
    await chat.turn("Where is my order?");
    chat.close();
    await returnLeases(w.orgId);

    const all = await list(w.appId, w.owner.token);
    expect(all.status).toBe(200);
    expect(all.body.items.map((item) => item.externalId)).toEqual(["cust-2", "cust-1"]);
    const [two, one] = all.body.items;
    expect(one).toMatchObject({
      id: first.endUser.id,
      appId: w.appId,
      name: "Customer cust-1",
      usage: { requests: 1 },
    });
    expect(one?.usage.priceMicros).toBeGreaterThan(0);
    expect(two).toMatchObject({
      id: second.endUser.id,
      usage: { requests: 0, priceMicros: 0 },
    });
    // What billing's usage by member says for them, to the micro-dollar.
    const usage = await api<{ items: { key: string; priceMicros: number }[] }>(
      "GET",
      `/api/orgs/${w.orgId}/billing/usage?groupBy=member`,
      { token: w.owner.token },
    );
    const billed = usage.body.items.find((item) => item.key === first.endUser.id);
    expect(billed?.priceMicros).toBe(one?.usage.priceMicros);

    const page1 = await list(w.appId, w.owner.token, "?limit=1");
    expect(page1.body.items.map((item) => item.externalId)).toEqual(["cust-2"]);
    expect(page1.body.nextCursor).not.toBeNull();
    const page2 = await list(
      w.appId,
      w.owner.token,
      `?limit=1&cursor=${page1.body.nextCursor ?? ""}`,
    );
    expect(page2.body.items.map((item) => item.externalId)).toEqual(["cust-1"]);
    expect(page2.body.nextCursor).toBeNull();
  });

  it("is the org's owners' and admins': a member 403, another org 404, a bad cursor 400", async () => {
    const w = await world();
    await endUserToken(w, "cust-1");
    const before = await snapshot();
    const member = await list(w.appId, w.member.token);
    expect(member.status).toBe(403);
    const foreign = await list(w.appId, w.outsider.token);
    expect(foreign.status).toBe(404);
    expect(errorCode(foreign)).toBe("not_found");
    const bad = await list(w.appId, w.owner.token, "?cursor=nope");
    expect(bad.status).toBe(400);
    expect(errorCode(bad)).toBe("invalid_request");
    // A server key does not list end users (it mints and erases them).
    const key = await list(w.appId, w.apiKey.secret);
    expect(key.status).toBe(401);
    expect(await snapshot()).toEqual(before);
  });
});

describe("the preview end user", () => {
  const preview = (appId: string, token: string) =>
    api<EmbedToken>("POST", `/api/apps/${appId}/preview-token`, { token });

  it("is the caller's own end user of the app, listed as a preview", async () => {
    const w = await world();
    const minted = await preview(w.appId, w.owner.token);
    expect(minted.status).toBe(201);
    expect(minted.headers.get("cache-control")).toBe("no-store");
    expect(minted.body.endUser.externalId).toBe(`parley:preview:${w.owner.id}`);
    // Again: the same end user, a new token.
    const again = await preview(w.appId, w.owner.token);
    expect(again.body.endUser.id).toBe(minted.body.endUser.id);
    const listed = await list(w.appId, w.owner.token);
    expect(listed.body.items).toHaveLength(1);
    expect(listed.body.items[0]?.name).toMatch(/\(preview\)$/);
  });

  it("chats from Parley's own pages; any other unlisted page is still refused", async () => {
    const w = await funded();
    const { accessToken } = (await preview(w.appId, w.owner.token)).body;
    const fromParley = await api<EmbedMe>("GET", "/api/embed/me", {
      token: accessToken,
      headers: { origin: BASE },
    });
    expect(fromParley.status).toBe(200);
    expect(fromParley.body.app.id).toBe(w.appId);
    const elsewhere = await api("GET", "/api/embed/me", {
      token: accessToken,
      headers: { origin: "https://evil.example" },
    });
    expect(elsewhere.status).toBe(403);
    // The session, its ticket and its socket from Parley's origin, and a turn.
    const session = await api<{ id: string }>("POST", "/api/embed/sessions", {
      token: accessToken,
      body: {},
      headers: { origin: BASE },
    });
    expect(session.status).toBe(201);
    const opened = await openSocket(session.body.id, accessToken, BASE);
    expect(opened.status).toBe(101);
    if (!opened.socket) throw new Error("no socket");
    await opened.socket.waitFor((frame) => frame.type === "cf_agent_identity");
    const turn = await opened.socket.turn("Hello from the preview");
    expect(turn.metadata).toMatchObject({ finish: "completed" });
    opened.socket.close();
    // A socket from an unlisted page is refused with the same token.
    const refused = await openSocket(session.body.id, accessToken, "https://evil.example");
    expect(refused.status).toBe(403);
    // The app's own page still works as before.
    const fromPage = await asEndUser("GET", "/api/embed/me", accessToken);
    expect(fromPage.status).toBe(200);
    expect(PAGE).not.toBe(BASE);
  });

  it("is for the org's owners and admins only, and only with a member's sign-in", async () => {
    const w = await world();
    const before = await snapshot();
    expect((await preview(w.appId, w.member.token)).status).toBe(403);
    expect((await preview(w.appId, w.outsider.token)).status).toBe(404);
    expect((await preview(w.appId, w.apiKey.secret)).status).toBe(401);
    const body = await api("POST", `/api/apps/${w.appId}/preview-token`, {
      token: w.owner.token,
      body: { sub: "someone-else" },
    });
    expect(body.status).toBe(400);
    expect(await snapshot()).toEqual(before);
  });

  it("its id is Parley's own: no tenant's end user can take it, before or after it exists (probe finding 3)", async () => {
    const w = await world();
    const app = await secretApp(w);
    const reserved = [
      `parley:preview:${w.owner.id}`,
      `parley-preview:${w.owner.id}`,
      `PARLEY-Preview:${w.owner.id}`,
      "parley:anything",
    ];
    const before = await snapshot();
    for (const sub of reserved) {
      // The API-key mint (before the owner opened the preview) ...
      const minted = await api("POST", `/api/apps/${w.appId}/end-user-tokens`, {
        token: w.apiKey.secret,
        body: { sub, name: "Mallory" },
      });
      expect(minted.status, sub).toBe(400);
      expect(errorCode(minted)).toBe("invalid_request");
      expect(JSON.stringify(minted.body)).toMatch(/Parley keeps those for its own end users/);
      // ... and the exchange of a token the app verified.
      const exchanged = await exchange(app.id, await hs256Token(app.secret, { claims: { sub } }));
      expect(exchanged.status, sub).toBe(400);
      expect(errorCode(exchanged)).toBe("invalid_request");
    }
    expect(await snapshot()).toEqual(before);

    // The owner's preview works, and is theirs alone.
    const mine = await preview(w.appId, w.owner.token);
    expect(mine.status).toBe(201);
    const session = await api<{ id: string }>("POST", "/api/embed/sessions", {
      token: mine.body.accessToken,
      body: {},
      headers: { origin: BASE },
    });
    expect(session.status).toBe(201);
    // After it exists, the exchange still cannot reach it.
    const after = await exchange(
      app.id,
      await hs256Token(app.secret, { claims: { sub: mine.body.endUser.externalId } }),
    );
    expect(after.status).toBe(400);
    // An ordinary id is still fine.
    expect(
      (await exchange(app.id, await hs256Token(app.secret, { claims: { sub: "cust-9" } }))).status,
    ).toBe(200);
  });

  it("never reuses a row a tenant made with the earlier preview id, before the reservation", async () => {
    const w = await world();
    // What a tenant could mint before 2026-12-06: the old preview id of the owner, as "Mallory".
    const planted = "eu_planted0000000000000000";
    await env.DB.prepare(
      "INSERT INTO end_users (id, org_id, app_id, external_id, name, created_at, last_seen_at) VALUES (?, ?, ?, ?, 'Mallory', ?, ?)",
    )
      .bind(planted, w.orgId, w.appId, `parley-preview:${w.owner.id}`, Date.now(), Date.now())
      .run();
    const mine = await preview(w.appId, w.owner.token);
    expect(mine.status).toBe(201);
    expect(mine.body.endUser.id).not.toBe(planted);
    expect(mine.body.endUser.externalId).toBe(`parley:preview:${w.owner.id}`);
    const row = await env.DB.prepare("SELECT name FROM end_users WHERE id = ?")
      .bind(mine.body.endUser.id)
      .first<{ name: string }>();
    expect(row?.name).toMatch(/\(preview\)$/);
  });
});
