import { env } from "cloudflare:test";
import {
  API_KEY_SCOPES,
  type ApiKey,
  type ApiKeyScope,
  type CreatedApiKey,
  type Page,
} from "@parley/shared";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import {
  API_KEY_PREFIX,
  acceptApiKey,
  apiKeyPrincipal,
  authenticate,
  LAST_USED_EVERY_MS,
  requestApiKey,
  requireApiKey,
} from "../src/auth/api-keys.ts";
import { sha256Base64Url } from "../src/auth/encoding.ts";
import { billingAccount } from "../src/billing/account.ts";
import { fileErasure } from "../src/erasure/file.ts";
import type { ErasurePlan } from "../src/erasure/plan.ts";
import { pseudonym } from "../src/erasure/pseudonym.ts";
import { d1Source, scanStore } from "../src/erasure/scan.ts";
import { verifyErasure } from "../src/erasure/verify.ts";
import type { AppEnv } from "../src/http/context.ts";
import { errorResponse } from "../src/http/errors.ts";
import { MAX_ACTIVE_API_KEYS } from "../src/routes/api-keys.ts";
import {
  type ApiResponse,
  api,
  apiKeyFor,
  errorCode,
  inOneWindow,
  snapshot,
  type TestApiKey,
  type World,
  world,
} from "./helpers.ts";

const KEY_SHAPE = /^prly_sk_[0-9a-hjkmnp-tv-z]{12}_[A-Za-z0-9_-]{43}$/;

const create = (w: World, token: string, body: Record<string, unknown>) =>
  api<CreatedApiKey>("POST", `/api/orgs/${w.orgId}/api-keys`, { token, body });

const list = (w: World, token: string) =>
  api<Page<ApiKey>>("GET", `/api/orgs/${w.orgId}/api-keys`, { token });

const keyRow = (id: string) =>
  env.DB.prepare("SELECT * FROM api_keys WHERE id = ?")
    .bind(id)
    .first<Record<string, string | number | null>>();

const useRows = (keyId: string) =>
  env.DB.prepare(
    "SELECT * FROM audit_log WHERE action = 'api_key.used' AND subject_id = ? ORDER BY id",
  )
    .bind(keyId)
    .all<Record<string, string | number | null>>()
    .then((r) => r.results);

/** The reads that take keys, with the scope each needs (usage over a window fixed in advance). */
const WINDOW = "from=2020-01-01&to=2100-01-01";
const READS: [path: (orgId: string) => string, scope: ApiKeyScope][] = [
  [(org) => `/api/orgs/${org}/sessions`, "sessions:read"],
  [(org) => `/api/orgs/${org}/billing/usage?groupBy=member&${WINDOW}`, "usage:read"],
  [(org) => `/api/orgs/${org}/billing/usage.csv?${WINDOW}`, "usage:read"],
];

/** Settles one billable call per entry on the world's org (as billing-usage.test.ts does). */
async function spend(w: World, plan: [memberId: string, priceMicros: number][]) {
  const stub = billingAccount(env, w.orgId);
  await stub.open({ orgId: w.orgId, grantMicros: 10_000_000 });
  for (const [i, [memberId, priceMicros]] of plan.entries()) {
    const requestId = `req-${w.orgId}-${i}`;
    await stub.reserve({
      requestId,
      amountMicros: priceMicros,
      memberId,
      projectId: w.projectId,
      sessionId: w.sessionId,
    });
    await stub.settle({
      requestId,
      costMicros: priceMicros - 10,
      priceMicros,
      tokens: {
        promptTokens: 100,
        completionTokens: 50,
        cachedPromptTokens: 0,
        reasoningTokens: 0,
      },
      model: "m/one",
      generationIds: [`gen-${i}`],
      billable: true,
    });
  }
}

describe("managing API keys", () => {
  it("creates a key whose secret is shown once, lists it without it, and revokes it at once", async () => {
    const w = await world();
    const created = await create(w, w.admin.token, {
      name: "Billing export",
      scopes: ["usage:read", "sessions:read"],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const key = created.body;
    expect(key.secret).toMatch(KEY_SHAPE);
    expect(key.secret.startsWith(`${key.prefix}_`)).toBe(true);
    expect(key).toMatchObject({
      name: "Billing export",
      // In the order of API_KEY_SCOPES, whatever order they were asked in.
      scopes: ["sessions:read", "usage:read"],
      createdBy: w.admin.id,
      lastUsedAt: null,
      expiresAt: null,
      revokedAt: null,
    });
    expect(key.id).toMatch(/^key_/);

    // The list shows it, and never a secret or a hash, nor any field beyond the key object's.
    const listed = await list(w, w.owner.token);
    expect(listed.status).toBe(200);
    expect(listed.body.nextCursor).toBeNull();
    const { secret, ...shown } = key;
    expect(listed.body.items[0]).toEqual(shown);
    const row = await keyRow(key.id);
    const text = JSON.stringify(listed.body);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.slice(key.prefix.length + 1));
    expect(text).not.toContain(String(row?.secret_hash));

    // It works, then is revoked, then is refused on the very next request.
    expect((await api("GET", `/api/orgs/${w.orgId}/sessions`, { token: secret })).status).toBe(200);
    const revoked = await api("DELETE", `/api/orgs/${w.orgId}/api-keys/${key.id}`, {
      token: w.owner.token,
    });
    expect(revoked.status).toBe(204);
    const refused = await api("GET", `/api/orgs/${w.orgId}/sessions`, { token: secret });
    expect(refused.status).toBe(401);
    expect(errorCode(refused)).toBe("unauthorized");
    // Again is a no-op: 204, and one audit row of the revocation, not two.
    const before = await snapshot();
    const again = await api("DELETE", `/api/orgs/${w.orgId}/api-keys/${key.id}`, {
      token: w.admin.token,
    });
    expect(again.status).toBe(204);
    expect(await snapshot()).toEqual(before);
    const actions = await env.DB.prepare(
      "SELECT action, actor_id FROM audit_log WHERE subject_id = ? AND action <> 'api_key.used' ORDER BY id",
    )
      .bind(key.id)
      .all<{ action: string; actor_id: string }>();
    expect(actions.results).toEqual([
      { action: "api_key.created", actor_id: w.admin.id },
      { action: "api_key.revoked", actor_id: w.owner.id },
    ]);
    const after = (await list(w, w.owner.token)).body.items.find((item) => item.id === key.id);
    expect(after?.revokedAt).toMatch(/^\d{4}-/);
  });

  it("stores only a SHA-256 of the key: the secret is in no column of D1", async () => {
    const w = await world();
    const { body: key } = await create(w, w.owner.token, {
      name: "Server",
      scopes: ["sessions:read"],
    });
    await api("GET", `/api/orgs/${w.orgId}/sessions`, { token: key.secret });
    const secretPart = key.secret.slice(key.prefix.length + 1);
    const row = await keyRow(key.id);
    expect(row).not.toBeNull();
    expect(row?.secret_hash).toBe(await sha256Base64Url(key.secret));
    for (const [column, value] of Object.entries(row ?? {})) {
      expect(String(value), column).not.toContain(secretPart);
    }
    // Nor anywhere else: every text column of every table (the erasure scan's walk).
    const needles = [key.secret, secretPart];
    expect(await scanStore(d1Source(env.DB), { needles })).toEqual([]);
  });

  it("takes an expiry in the future, and refuses the key once it has passed", async () => {
    const w = await world();
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const { status, body: key } = await create(w, w.owner.token, {
      name: "Temporary",
      scopes: ["sessions:read"],
      expiresAt,
    });
    expect(status).toBe(201);
    expect(key.expiresAt).toBe(expiresAt);
    // No expiry may be said as the key reads it back, null (found by the outside probe: a 400).
    const forever = await create(w, w.owner.token, {
      name: "Forever",
      scopes: ["sessions:read"],
      expiresAt: null,
    });
    expect(forever.status, JSON.stringify(forever.body)).toBe(201);
    expect(forever.body.expiresAt).toBeNull();
    const path = `/api/orgs/${w.orgId}/sessions`;
    expect((await api("GET", path, { token: key.secret })).status).toBe(200);
    await env.DB.prepare("UPDATE api_keys SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, key.id)
      .run();
    const expired = await api("GET", path, { token: key.secret });
    expect(expired.status).toBe(401);
    expect(expired.body).toMatchObject({
      error: { code: "unauthorized", message: expect.stringMatching(/expired/) },
    });
  });

  it(`holds at most ${MAX_ACTIVE_API_KEYS} active keys per org (409, nothing written); revoking one frees a place`, async () => {
    const w = await world();
    // The world's key is one of them.
    await Promise.all(
      Array.from({ length: MAX_ACTIVE_API_KEYS - 2 }, () => apiKeyFor(w.orgId, ["usage:read"])),
    );
    await apiKeyFor(w.orgId, ["usage:read"], { revokedAt: Date.now() });
    await apiKeyFor(w.orgId, ["usage:read"], { expiresAt: Date.now() - 1 });
    const last = await create(w, w.owner.token, { name: "Last", scopes: ["usage:read"] });
    expect(last.status).toBe(201);
    const before = await snapshot();
    const refused = await create(w, w.owner.token, { name: "One more", scopes: ["usage:read"] });
    expect(refused.status).toBe(409);
    expect(errorCode(refused)).toBe("conflict");
    expect(await snapshot()).toEqual(before);
    await api("DELETE", `/api/orgs/${w.orgId}/api-keys/${last.body.id}`, { token: w.owner.token });
    expect((await create(w, w.owner.token, { name: "Again", scopes: ["usage:read"] })).status).toBe(
      201,
    );
  });

  it("another org's key is 404 to revoke, from either org's path; a missing one too", async () => {
    const w = await world();
    const theirs = await apiKeyFor(w.otherOrgId, ["usage:read"], { createdBy: w.outsider.id });
    const before = await snapshot();
    for (const path of [
      `/api/orgs/${w.orgId}/api-keys/${theirs.id}`,
      `/api/orgs/${w.otherOrgId}/api-keys/${theirs.id}`,
      `/api/orgs/${w.orgId}/api-keys/key_00000000000000000000000000`,
    ]) {
      const res = await api("DELETE", path, { token: w.owner.token });
      expect(res.status, path).toBe(404);
    }
    expect(await snapshot()).toEqual(before);
    expect((await keyRow(theirs.id))?.revoked_at).toBeNull();
    // Still good for its own org.
    const usage = await api("GET", `/api/orgs/${w.otherOrgId}/billing/usage`, {
      token: theirs.secret,
    });
    expect(usage.status).toBe(200);
  });
});

describe("what a key may read", () => {
  it("each read with its scope answers what an admin gets; without it, 403 and nothing written", async () => {
    const w = await world();
    await spend(w, [
      [w.member.id, 1_000],
      [w.admin.id, 4_000],
    ]);
    for (const [path, scope] of READS) {
      const url = path(w.orgId);
      const withScope = await apiKeyFor(w.orgId, [scope]);
      const asKey = await api("GET", url, { token: withScope.secret });
      const asAdmin = await api("GET", url, { token: w.admin.token });
      expect(asKey.status, url).toBe(200);
      expect(asKey.body, url).toEqual(asAdmin.body);
      const others = API_KEY_SCOPES.filter((s) => s !== scope);
      const without = await apiKeyFor(w.orgId, others);
      const before = await snapshot();
      const refused = await api("GET", url, { token: without.secret });
      expect(refused.status, url).toBe(403);
      expect(errorCode(refused)).toBe("forbidden");
      expect(await snapshot()).toEqual(before);
    }
  });

  it("a key sees every member's sessions and usage, and may filter by member, as an admin", async () => {
    const w = await world();
    await spend(w, [
      [w.member.id, 1_000],
      [w.admin.id, 4_000],
    ]);
    const sessions = await api<Page<{ id: string; ownerId: string }>>(
      "GET",
      `/api/orgs/${w.orgId}/sessions?member=${w.member.id}`,
      { token: w.apiKey.secret },
    );
    expect(sessions.status).toBe(200);
    expect(sessions.body.items.map((s) => s.id)).toEqual([w.sessionId]);
    const usage = await api<{ totals: { priceMicros: number } }>(
      "GET",
      `/api/orgs/${w.orgId}/billing/usage?groupBy=member`,
      { token: w.apiKey.secret },
    );
    expect(usage.body.totals.priceMicros).toBe(5_000);
    const oneMember = await api<{ totals: { priceMicros: number } }>(
      "GET",
      `/api/orgs/${w.orgId}/billing/usage?groupBy=member&memberId=${w.admin.id}`,
      { token: w.apiKey.secret },
    );
    expect(oneMember.body.totals.priceMicros).toBe(4_000);
    const csv = await api<string>("GET", `/api/orgs/${w.orgId}/billing/usage.csv`, {
      token: w.apiKey.secret,
    });
    expect(csv.status).toBe(200);
    expect(csv.body.trim().split("\n")).toHaveLength(3);
  });

  it("a key of org A on org B's path is 404, exactly like a missing org, with or without the scope", async () => {
    const w = await world();
    const noScope = await apiKeyFor(w.orgId, ["end_users:token"]);
    const before = await snapshot();
    for (const [path] of READS) {
      const foreign = await api("GET", path(w.otherOrgId), { token: w.apiKey.secret });
      const missing = await api("GET", path("org_00000000000000000000000000"), {
        token: w.apiKey.secret,
      });
      expect(foreign.status, path(w.otherOrgId)).toBe(404);
      expect(foreign.body).toEqual(missing.body);
      const unscoped = await api("GET", path(w.otherOrgId), { token: noScope.secret });
      expect(unscoped.status).toBe(404);
      expect(unscoped.body).toEqual(missing.body);
    }
    expect(await snapshot()).toEqual(before);
  });

  it("never opens the admin surface, nor the chats: 401 with nothing written", async () => {
    const w = await world();
    const key = w.apiKey.secret;
    const before = await snapshot();
    const calls: [string, string, unknown?][] = [
      ["GET", "/api/me"],
      ["GET", `/api/orgs/${w.orgId}`],
      ["GET", `/api/orgs/${w.orgId}/api-keys`],
      ["POST", `/api/orgs/${w.orgId}/api-keys`, { name: "Child", scopes: ["usage:read"] }],
      ["DELETE", `/api/orgs/${w.orgId}/api-keys/${w.apiKey.id}`],
      ["POST", `/api/orgs/${w.orgId}/members`, { email: w.newcomer.email, role: "admin" }],
      ["PATCH", `/api/orgs/${w.orgId}/members/${w.member.id}`, { role: "owner" }],
      ["POST", `/api/orgs/${w.orgId}/projects`, { name: "Via key" }],
      ["DELETE", `/api/projects/${w.projectId}`],
      ["GET", `/api/sessions/${w.sessionId}`],
      ["GET", `/api/orgs/${w.orgId}/billing`],
      ["GET", `/api/orgs/${w.orgId}/billing/activity`],
      ["PATCH", `/api/orgs/${w.orgId}/billing/settings`, { memberDailyLimitMicros: 1 }],
      ["POST", `/api/orgs/${w.orgId}/billing/checkout`, { amountMicros: 10_000_000 }],
      [
        "POST",
        `/api/orgs/${w.orgId}/erasure-requests`,
        { subject: { type: "member", id: w.member.id } },
      ],
      ["POST", "/api/connect-tickets", { agent: "onboarding-agent", name: w.projectId }],
      ["GET", `/agents/onboarding-agent/${w.projectId}/get-messages`],
      ["GET", "/api/no-such-route"],
    ];
    for (const [method, path, body] of calls) {
      const res = await api(method, path, { token: key, body });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(errorCode(res)).toBe("unauthorized");
    }
    expect(await snapshot()).toEqual(before);
    expect((await keyRow(w.apiKey.id))?.revoked_at).toBeNull();
  });
});

describe("keys that are not good: 401 and nothing written", () => {
  const path = (w: World) => `/api/orgs/${w.orgId}/sessions`;
  const flip = (text: string, at: number) =>
    `${text.slice(0, at)}${text[at] === "A" ? "B" : "A"}${text.slice(at + 1)}`;
  const attacks: [string, (w: World, other: TestApiKey) => Promise<string | undefined>][] = [
    ["revoked", async (w) => (await apiKeyFor(w.orgId, API_KEY_SCOPES, { revokedAt: 1 })).secret],
    [
      "expired",
      async (w) => (await apiKeyFor(w.orgId, API_KEY_SCOPES, { expiresAt: Date.now() - 1 })).secret,
    ],
    ["unknown, well formed", async () => `${API_KEY_PREFIX}abcdefghjkmn_${"A".repeat(43)}`],
    ["right public id, wrong secret", async (w) => `${w.apiKey.prefix}_${"A".repeat(43)}`],
    [
      "one secret character changed",
      async (w) => flip(w.apiKey.secret, w.apiKey.secret.length - 5),
    ],
    ["truncated", async (w) => w.apiKey.secret.slice(0, -1)],
    ["one character too many", async (w) => `${w.apiKey.secret}A`],
    ["only the prefix", async (w) => w.apiKey.prefix],
    ["the bare prefix", async () => API_KEY_PREFIX],
    ["wrong prefix", async (w) => w.apiKey.secret.replace("prly_sk_", "prly_pk_")],
    ["prefix in capitals", async (w) => w.apiKey.secret.replace("prly_sk_", "PRLY_SK_")],
    [
      "public id in capitals",
      async (w) => {
        const upper = `${API_KEY_PREFIX}${w.apiKey.prefix.slice(API_KEY_PREFIX.length).toUpperCase()}`;
        return w.apiKey.secret.replace(w.apiKey.prefix, upper);
      },
    ],
    [
      "another key's public id with this key's secret",
      async (w, other) => `${other.prefix}${w.apiKey.secret.slice(w.apiKey.prefix.length)}`,
    ],
    ["the hash instead of the key", async (w) => String((await keyRow(w.apiKey.id))?.secret_hash)],
    ["no key at all", async () => undefined],
  ];

  it.each(attacks)("%s", async (_name, make) => {
    const w = await world();
    const other = await apiKeyFor(w.orgId, API_KEY_SCOPES);
    const token = await make(w, other);
    const before = await snapshot();
    const res = await api("GET", path(w), token === undefined ? {} : { token });
    expect(res.status, JSON.stringify(res.body)).toBe(401);
    expect(errorCode(res)).toBe("unauthorized");
    expect(await snapshot()).toEqual(before);
    expect((await keyRow(w.apiKey.id))?.last_used_at).toBeNull();
  });

  it("a key in the URL or under another scheme is no key", async () => {
    const w = await world();
    const before = await snapshot();
    const attempts: { query: string; headers: Record<string, string> }[] = [
      { query: `?api_key=${w.apiKey.secret}`, headers: {} },
      { query: `?token=${w.apiKey.secret}`, headers: {} },
      { query: "", headers: { authorization: `Basic ${btoa(`${w.apiKey.secret}:`)}` } },
      { query: "", headers: { authorization: `Token ${w.apiKey.secret}` } },
      { query: "", headers: { "x-api-key": w.apiKey.secret } },
    ];
    for (const attempt of attempts) {
      const res = await api("GET", `${path(w)}${attempt.query}`, { headers: attempt.headers });
      expect(res.status, JSON.stringify(attempt)).toBe(401);
    }
    expect(await snapshot()).toEqual(before);
  });

  it("the good key itself is accepted (so the attacks above fail for their reason)", async () => {
    const w = await world();
    expect((await api("GET", path(w), { token: w.apiKey.secret })).status).toBe(200);
    // The scheme is case-insensitive, as for access tokens.
    const res = await api("GET", path(w), {
      headers: { authorization: `bearer ${w.apiKey.secret}` },
    });
    expect(res.status).toBe(200);
  });
});

describe("each use of a key", () => {
  it("is one audit row, without the secret; a refused use writes none", async () => {
    const w = await world();
    const key = w.apiKey;
    const res = await api("GET", `/api/orgs/${w.orgId}/billing/usage.csv`, { token: key.secret });
    expect(res.status).toBe(200);
    const rows = await useRows(key.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      org_id: w.orgId,
      actor_id: key.id,
      subject_type: "api_key",
      subject_id: key.id,
    });
    expect(JSON.parse(String(rows[0]?.data))).toEqual({
      method: "GET",
      route: "/api/orgs/:orgId/billing/usage.csv",
      status: 200,
    });
    expect(JSON.stringify(rows)).not.toContain(key.secret.slice(key.prefix.length + 1));
    // Refused: a bad query (400), another org (404).
    await api("GET", `/api/orgs/${w.orgId}/sessions?limit=0`, { token: key.secret });
    await api("GET", `/api/orgs/${w.otherOrgId}/sessions`, { token: key.secret });
    expect(await useRows(key.id)).toHaveLength(1);
    await api("GET", `/api/orgs/${w.orgId}/sessions`, { token: key.secret });
    expect(await useRows(key.id)).toHaveLength(2);
  });

  it("moves last_used_at at most once a minute", async () => {
    const w = await world();
    const key = w.apiKey;
    const use = () => api("GET", `/api/orgs/${w.orgId}/sessions`, { token: key.secret });
    const lastUsed = async () => (await keyRow(key.id))?.last_used_at as number | null;
    const start = Date.now();
    expect((await use()).status).toBe(200);
    const first = await lastUsed();
    expect(first).toBeGreaterThanOrEqual(start);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await use()).status).toBe(200);
    expect(await lastUsed()).toBe(first);
    // Just under a minute ago: still not moved; just over: moved to now.
    const almost = Date.now() - LAST_USED_EVERY_MS + 5_000;
    await env.DB.prepare("UPDATE api_keys SET last_used_at = ? WHERE id = ?")
      .bind(almost, key.id)
      .run();
    await use();
    expect(await lastUsed()).toBe(almost);
    const old = Date.now() - LAST_USED_EVERY_MS - 1;
    await env.DB.prepare("UPDATE api_keys SET last_used_at = ? WHERE id = ?")
      .bind(old, key.id)
      .run();
    const beforeUse = Date.now();
    await use();
    expect(await lastUsed()).toBeGreaterThanOrEqual(beforeUse);
    // Every use was recorded, though the row moved only twice.
    expect(await useRows(key.id)).toHaveLength(4);
    const listed = (await list(w, w.owner.token)).body.items.find((item) => item.id === key.id);
    expect(Date.parse(listed?.lastUsedAt ?? "")).toBeGreaterThanOrEqual(beforeUse);
  });

  it("concurrent first uses move last_used_at once, and later uses in the minute not at all", async () => {
    const w = await world();
    const key = w.apiKey;
    const use = () => api("GET", `/api/orgs/${w.orgId}/sessions`, { token: key.secret });
    // Counts the writes of the key's last_used_at, whatever value they write.
    await env.DB.batch([
      env.DB.prepare("CREATE TABLE test_key_touches (key_id TEXT)"),
      env.DB.prepare(
        `CREATE TRIGGER test_key_touched AFTER UPDATE OF last_used_at ON api_keys
         BEGIN INSERT INTO test_key_touches VALUES (NEW.id); END`,
      ),
    ]);
    const touches = async () =>
      (
        await env.DB.prepare("SELECT COUNT(*) AS n FROM test_key_touches WHERE key_id = ?")
          .bind(key.id)
          .first<{ n: number }>()
      )?.n;
    try {
      const first = await Promise.all(Array.from({ length: 10 }, use));
      expect(first.map((res) => res.status)).toEqual(Array<number>(10).fill(200));
      expect(await touches()).toBe(1);
      for (let i = 0; i < 3; i++) await use();
      expect(await touches()).toBe(1);
      expect(await useRows(key.id)).toHaveLength(13);
    } finally {
      await env.DB.batch([
        env.DB.prepare("DROP TRIGGER test_key_touched"),
        env.DB.prepare("DROP TABLE test_key_touches"),
      ]);
    }
  });

  it("is rate-limited per key: the 101st in 10 s is 429 with nothing written; another key goes on", async () => {
    await inOneWindow(8_000, 10_000);
    const w = await world();
    const path = `/api/orgs/${w.orgId}/sessions`;
    const statuses: number[] = [];
    for (let batch = 0; batch < 5; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => api("GET", path, { token: w.apiKey.secret })),
      );
      statuses.push(...answers.map((res) => res.status));
    }
    expect(statuses).toEqual(Array<number>(100).fill(200));
    const before = await snapshot();
    const limited = await api("GET", path, { token: w.apiKey.secret });
    expect(limited.status).toBe(429);
    expect(errorCode(limited)).toBe("rate_limited");
    expect(await snapshot()).toEqual(before);
    const other = await apiKeyFor(w.orgId, ["sessions:read"]);
    expect((await api("GET", path, { token: other.secret })).status).toBe(200);
    // A member's token is not counted against the key.
    expect((await api("GET", path, { token: w.owner.token })).status).toBe(200);
  }, 60_000);
});

describe("erasure and keys", () => {
  it("a key made by a member who is erased keeps working; who made it becomes their pseudonym", async () => {
    const w = await world();
    const { body: key } = await create(w, w.admin.token, {
      name: "Made by the admin",
      scopes: ["sessions:read"],
    });
    const erased = await api<{ status: string; verification: { ok: boolean } }>(
      "POST",
      `/api/orgs/${w.orgId}/erasure-requests`,
      { token: w.owner.token, body: { subject: { type: "member", id: w.admin.id } } },
    );
    expect(erased.status).toBe(202);
    expect(erased.body).toMatchObject({ status: "completed", verification: { ok: true } });
    expect((await keyRow(key.id))?.created_by).toBe(
      await pseudonym(env.ERASURE_HASH_KEY, w.admin.id),
    );
    expect((await api("GET", `/api/orgs/${w.orgId}/sessions`, { token: key.secret })).status).toBe(
      200,
    );
  });

  it("an org erased with its only member's account takes its keys along", async () => {
    const w = await world();
    const theirs = await apiKeyFor(w.otherOrgId, API_KEY_SCOPES, { createdBy: w.outsider.id });
    const res = await api<{ status: string; verification: { ok: boolean } }>("DELETE", "/api/me", {
      token: w.outsider.token,
      body: { confirm: true },
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: "completed", verification: { ok: true } });
    const left = await env.DB.prepare("SELECT COUNT(*) AS n FROM api_keys WHERE org_id = ?")
      .bind(w.otherOrgId)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
    const refused = await api("GET", `/api/orgs/${w.otherOrgId}/sessions`, {
      token: theirs.secret,
    });
    expect(refused.status).toBe(401);
  });

  it("filing that erasure stops the org's keys at once, before the job reaches them", async () => {
    const w = await world();
    const theirs = await apiKeyFor(w.otherOrgId, API_KEY_SCOPES, { createdBy: w.outsider.id });
    // The job is held back (a stand-in namespace whose job does nothing), as if it were queued.
    const heldJob = {
      idFromName: (name: string) => name,
      get: () => ({ start: async () => {}, run: async () => {} }),
    } as unknown as Env["ERASURE_JOB"];
    await fileErasure(
      { ...env, ERASURE_JOB: heldJob },
      {
        requestedBy: w.outsider.id,
        orgId: null,
        subject: { type: "account", id: w.outsider.id },
        reason: null,
        plan: {
          userId: w.outsider.id,
          orgIds: [w.otherOrgId],
          projectIds: [],
          sessionIds: [],
          deleteOrgIds: [w.otherOrgId],
          membershipOrgId: null,
        },
      },
    );
    expect((await keyRow(theirs.id))?.revoked_at).toBeTypeOf("number");
    const refused = await api("GET", `/api/orgs/${w.otherOrgId}/sessions`, {
      token: theirs.secret,
    });
    expect(refused.status).toBe(401);
    // Another org's keys are untouched.
    expect((await keyRow(w.apiKey.id))?.revoked_at).toBeNull();
  });

  it("the verification scan fails when an erased org's key is left behind", async () => {
    const w = await world();
    await apiKeyFor(w.otherOrgId, ["usage:read"]);
    const plan: ErasurePlan = {
      userId: null,
      orgIds: [],
      projectIds: [],
      sessionIds: [],
      deleteOrgIds: [w.otherOrgId],
      membershipOrgId: null,
    };
    const verification = await verifyErasure(env, plan);
    expect(verification.ok).toBe(false);
    expect(verification.findings.join("\n")).toMatch(/api_keys/);
  });
});

describe("the helpers other routes use", () => {
  // A route of a later feature, as it would be written: key-only with a scope, and key-or-member.
  const probe = new Hono<AppEnv>()
    .use("/api/*", authenticate)
    .get("/api/orgs/:orgId/probe", requireApiKey("end_users:token"), (c) =>
      c.json({ key: apiKeyPrincipal(c, c.req.param("orgId")) }),
    )
    .get("/api/orgs/:orgId/either", acceptApiKey("usage:read"), (c) =>
      c.json({ key: requestApiKey(c), caller: c.get("caller")?.userId ?? null }),
    )
    .get("/api/orgs/:orgId/late", acceptApiKey("usage:read"), (c) =>
      c.json({ key: apiKeyPrincipal(c, c.req.param("orgId"), "end_users:erase") }),
    )
    .onError(errorResponse);
  const call = async (path: string, token: string): Promise<ApiResponse> => {
    const res = await probe.request(path, { headers: { authorization: `Bearer ${token}` } }, env);
    const body = (await res.json()) as Record<string, unknown>;
    return { status: res.status, body, headers: res.headers };
  };

  it("requireApiKey: a key with the scope gets its principal; without it 403; a member 401; another org 404", async () => {
    const w = await world();
    const ok = await call(`/api/orgs/${w.orgId}/probe`, w.apiKey.secret);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      key: { keyId: w.apiKey.id, orgId: w.orgId, scopes: [...API_KEY_SCOPES] },
    });
    const unscoped = await apiKeyFor(w.orgId, ["usage:read"]);
    expect((await call(`/api/orgs/${w.orgId}/probe`, unscoped.secret)).status).toBe(403);
    expect((await call(`/api/orgs/${w.orgId}/probe`, w.owner.token)).status).toBe(401);
    expect((await call(`/api/orgs/${w.otherOrgId}/probe`, w.apiKey.secret)).status).toBe(404);
  });

  it("acceptApiKey: a key or a member, each seen for what it is", async () => {
    const w = await world();
    const asKey = await call(`/api/orgs/${w.orgId}/either`, w.apiKey.secret);
    expect(asKey.body).toMatchObject({ key: { keyId: w.apiKey.id }, caller: null });
    const asMember = await call(`/api/orgs/${w.orgId}/either`, w.member.token);
    expect(asMember.body).toEqual({ key: null, caller: w.member.id });
  });

  it("apiKeyPrincipal with a scope: another org 404 first, then a missing scope 403", async () => {
    const w = await world();
    const readOnly = await apiKeyFor(w.orgId, ["usage:read"]);
    const both = await apiKeyFor(w.orgId, ["usage:read", "end_users:erase"]);
    expect((await call(`/api/orgs/${w.orgId}/late`, readOnly.secret)).status).toBe(403);
    expect((await call(`/api/orgs/${w.orgId}/late`, both.secret)).status).toBe(200);
    const theirs = await apiKeyFor(w.otherOrgId, ["usage:read"]);
    expect((await call(`/api/orgs/${w.orgId}/late`, theirs.secret)).status).toBe(404);
    expect((await call(`/api/orgs/${w.orgId}/late`, w.member.token)).body).toEqual({ key: null });
  });
});
