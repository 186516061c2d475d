import { env } from "cloudflare:test";
import type { App, AppWithSecret, Page } from "@parley/shared";
import { describe, expect, it } from "vitest";
import { verifyErasure } from "../src/erasure/verify.ts";
import {
  AUDIENCE,
  createApp,
  exchange,
  hs256Token,
  ISSUER,
  keyPair,
  ORIGIN,
  secretApp,
  secretAppBody,
} from "./apps.ts";
import { api, errorCode, signUp, snapshot, type World, world } from "./helpers.ts";

const count = async (sql: string, ...bindings: unknown[]) =>
  (
    await env.DB.prepare(sql)
      .bind(...bindings)
      .first<{ n: number }>()
  )?.n ?? 0;

describe("apps: create, read, list, change, delete", () => {
  it("an owner creates an app; its secret is in the creation response and nowhere else", async () => {
    const w = await world();
    const res = await createApp(
      w,
      secretAppBody(w, { endUserDailyLimitMicros: 250_000, showCost: true }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const created = res.body;
    expect(created.id).toMatch(/^app_[0-9a-z]{26}$/);
    expect(created.secret?.secret).toMatch(/^prly_as_[A-Za-z0-9_-]{43}$/);
    expect(created.secret?.kid).toMatch(/^kid_[0-9a-z]{26}$/);
    expect(created).toMatchObject({
      orgId: w.orgId,
      name: "Shop",
      allowedOrigins: [ORIGIN],
      projectIds: [w.projectId],
      verification: {
        type: "secret",
        alg: "HS256",
        issuer: ISSUER,
        audience: AUDIENCE,
        maxTokenLifetimeSeconds: 600,
        secrets: [{ kid: created.secret?.kid, expiresAt: null }],
      },
      endUserDailyLimitMicros: 250_000,
      endUserMonthlyLimitMicros: null,
      showCost: true,
    });
    const secret = created.secret?.secret ?? "";
    const body = secret.slice("prly_as_".length);

    const read = await api<App>("GET", `/api/apps/${created.id}`, { token: w.admin.token });
    expect(read.status).toBe(200);
    const { secret: _shown, ...withoutSecret } = created;
    expect(read.body).toEqual(withoutSecret);
    const list = await api<Page<App>>("GET", `/api/orgs/${w.orgId}/apps`, { token: w.owner.token });
    expect(list.body.items.map((a) => a.id)).toContain(created.id);
    for (const text of [JSON.stringify(read.body), JSON.stringify(list.body)]) {
      expect(text).not.toContain(body);
      expect(text).not.toContain('"secret":"');
    }
    // Stored sealed, bound to its app and kid; never in the audit trail.
    const row = await env.DB.prepare("SELECT sealed FROM app_secrets WHERE app_id = ?")
      .bind(created.id)
      .first<{ sealed: string }>();
    expect(row?.sealed).toMatch(/^v1\./);
    expect(row?.sealed).not.toContain(body);
    const audit = await env.DB.prepare("SELECT * FROM audit_log WHERE subject_id = ?")
      .bind(created.id)
      .all();
    expect(audit.results.length).toBe(1);
    expect(JSON.stringify(audit.results)).not.toContain(body);
  });

  it("an app with the tenant's public key or JWKS has no secret, and shows the key and URL", async () => {
    const w = await world();
    const { jwk } = await keyPair("ES256", "tenant-1");
    const withKey = await createApp(
      w,
      secretAppBody(w, {
        verification: {
          type: "public_key",
          alg: "ES256",
          jwk: { ...jwk, use: "sig", ext: true },
          issuer: ISSUER,
          audience: AUDIENCE,
          maxTokenLifetimeSeconds: 120,
        },
      }),
    );
    expect(withKey.status, JSON.stringify(withKey.body)).toBe(201);
    expect(withKey.body.secret).toBeUndefined();
    // The members the key needs and its kid are stored; whatever else was pasted is not.
    expect(withKey.body.verification).toEqual({
      type: "public_key",
      alg: "ES256",
      jwk: { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y, kid: "tenant-1" },
      issuer: ISSUER,
      audience: AUDIENCE,
      maxTokenLifetimeSeconds: 120,
    });
    const jwksUrl = `${env.TEST_JWKS_URL}/keys/some-tenant`;
    const withJwks = await createApp(
      w,
      secretAppBody(w, {
        verification: {
          type: "jwks",
          alg: "RS256",
          url: jwksUrl,
          issuer: ISSUER,
          audience: AUDIENCE,
        },
      }),
    );
    expect(withJwks.status, JSON.stringify(withJwks.body)).toBe(201);
    expect(withJwks.body.verification).toMatchObject({ type: "jwks", alg: "RS256", url: jwksUrl });
    expect(
      await count(
        "SELECT COUNT(*) AS n FROM app_secrets WHERE app_id IN (?, ?)",
        withKey.body.id,
        withJwks.body.id,
      ),
    ).toBe(0);
  });

  it("PATCH changes what it names and replaces lists; limits and showCost are stored", async () => {
    const w = await world();
    const app = await secretApp(w);
    const second = await api<{ id: string }>("POST", `/api/orgs/${w.orgId}/projects`, {
      token: w.owner.token,
      body: { name: "Second" },
    });
    const res = await api<App>("PATCH", `/api/apps/${app.id}`, {
      token: w.admin.token,
      body: {
        name: "Shop v2",
        allowedOrigins: ["https://a.shop.example.com", "http://localhost:3000"],
        projectIds: [second.body.id, w.projectId],
        endUserMonthlyLimitMicros: 0,
        showCost: true,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      name: "Shop v2",
      allowedOrigins: ["https://a.shop.example.com", "http://localhost:3000"],
      projectIds: [second.body.id, w.projectId],
      endUserDailyLimitMicros: null,
      endUserMonthlyLimitMicros: 0,
      showCost: true,
      verification: { type: "secret", secrets: [{ kid: app.kid }] },
    });
    const read = await api<App>("GET", `/api/apps/${app.id}`, { token: w.owner.token });
    expect(read.body).toEqual(res.body);
    // Removing a limit is null.
    const cleared = await api<App>("PATCH", `/api/apps/${app.id}`, {
      token: w.owner.token,
      body: { endUserMonthlyLimitMicros: null, showCost: false },
    });
    expect(cleared.body).toMatchObject({ endUserMonthlyLimitMicros: null, showCost: false });
  });

  it("leaving secret verification drops the secrets; coming back shows a new one, once", async () => {
    const w = await world();
    const app = await secretApp(w);
    const { jwk } = await keyPair("EdDSA");
    const toKey = await api<AppWithSecret>("PATCH", `/api/apps/${app.id}`, {
      token: w.owner.token,
      body: {
        verification: { type: "public_key", alg: "EdDSA", jwk, issuer: ISSUER, audience: AUDIENCE },
      },
    });
    expect(toKey.status, JSON.stringify(toKey.body)).toBe(200);
    expect(await count("SELECT COUNT(*) AS n FROM app_secrets WHERE app_id = ?", app.id)).toBe(0);
    expect((await exchange(app.id, await hs256Token(app.secret))).status).toBe(401);
    const back = await api<AppWithSecret>("PATCH", `/api/apps/${app.id}`, {
      token: w.owner.token,
      body: { verification: { type: "secret", issuer: ISSUER, audience: AUDIENCE } },
    });
    expect(back.status).toBe(200);
    const fresh = back.body.secret?.secret ?? "";
    expect(fresh).toMatch(/^prly_as_/);
    expect(fresh).not.toBe(app.secret);
    expect((await exchange(app.id, await hs256Token(fresh))).status).toBe(200);
    const read = await api("GET", `/api/apps/${app.id}`, { token: w.owner.token });
    expect(JSON.stringify(read.body)).not.toContain(fresh.slice(8));
  });

  it("DELETE: the app is gone (410 to its org), out of the list, its secrets removed", async () => {
    const w = await world();
    const app = await secretApp(w);
    expect((await exchange(app.id, await hs256Token(app.secret))).status).toBe(200);
    const del = await api("DELETE", `/api/apps/${app.id}`, { token: w.admin.token });
    expect(del.status).toBe(204);
    const read = await api("GET", `/api/apps/${app.id}`, { token: w.owner.token });
    expect(read.status).toBe(410);
    expect((await api("GET", `/api/apps/${app.id}`, { token: w.outsider.token })).status).toBe(404);
    const list = await api<Page<App>>("GET", `/api/orgs/${w.orgId}/apps`, { token: w.owner.token });
    expect(list.body.items.map((a) => a.id)).not.toContain(app.id);
    expect(await count("SELECT COUNT(*) AS n FROM app_secrets WHERE app_id = ?", app.id)).toBe(0);
    expect((await exchange(app.id, await hs256Token(app.secret))).status).toBe(401);
    expect((await api("DELETE", `/api/apps/${app.id}`, { token: w.owner.token })).status).toBe(410);
  });
});

describe("apps: who may", () => {
  it("a member gets 403 on every app route; another org's app answers like a missing one", async () => {
    const w = await world();
    const app = await secretApp(w);
    const calls: [string, string, unknown?][] = [
      ["GET", `/api/orgs/${w.orgId}/apps`],
      ["POST", `/api/orgs/${w.orgId}/apps`, secretAppBody(w)],
      ["GET", `/api/apps/${app.id}`],
      ["PATCH", `/api/apps/${app.id}`, { name: "Mine" }],
      ["DELETE", `/api/apps/${app.id}`],
      ["POST", `/api/apps/${app.id}/secrets`, {}],
    ];
    const before = await snapshot();
    for (const [method, path, body] of calls) {
      const res = await api(method, path, { token: w.member.token, body });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    const missing = "app_00000000000000000000000000";
    for (const [method, path, body] of calls.slice(2)) {
      const foreign = await api(method, path, { token: w.outsider.token, body });
      const none = await api(method, path.replace(app.id, missing), {
        token: w.outsider.token,
        body,
      });
      expect(foreign.status, `${method} ${path}`).toBe(404);
      expect(foreign.body).toEqual(none.body);
    }
    expect(await snapshot()).toEqual(before);
  });

  it("an app may only offer projects of its own org (a foreign one reads like a missing one)", async () => {
    const w = await world();
    const before = await snapshot();
    const foreign = await createApp(
      w,
      secretAppBody(w, { projectIds: [w.projectId, w.otherProjectId] }),
    );
    const missing = await createApp(
      w,
      secretAppBody(w, { projectIds: [w.projectId, "prj_00000000000000000000000000"] }),
    );
    expect(foreign.status).toBe(400);
    expect(foreign.body).toEqual(missing.body);
    expect(foreign.body).toMatchObject({
      error: { code: "invalid_request", field: "projectIds.1" },
    });
    expect(await snapshot()).toEqual(before);
  });
});

type Body = (w: World) => Record<string, unknown>;
const withVerification =
  (v: Record<string, unknown>): Body =>
  (w) =>
    secretAppBody(w, { verification: { issuer: ISSUER, audience: AUDIENCE, ...v } });
const withOrigins =
  (origins: unknown[]): Body =>
  (w) =>
    secretAppBody(w, { allowedOrigins: origins });
const rsaLike = { kty: "RSA", n: "x".repeat(342), e: "AQAB" };

const invalid: [string, Body, string][] = [
  [
    "an origin with a trailing slash",
    withOrigins(["https://shop.example.com/"]),
    "allowedOrigins.0",
  ],
  ["an origin with a path", withOrigins(["https://shop.example.com/app"]), "allowedOrigins.0"],
  ["a wildcard origin", withOrigins(["https://*.example.com"]), "allowedOrigins.0"],
  ["plain http to a public host", withOrigins(["http://shop.example.com"]), "allowedOrigins.0"],
  ["a host without a scheme", withOrigins(["shop.example.com"]), "allowedOrigins.0"],
  [
    "the default port spelled out",
    withOrigins(["https://shop.example.com:443"]),
    "allowedOrigins.0",
  ],
  [
    "capitals (browsers send lower case)",
    withOrigins(["https://Shop.example.com"]),
    "allowedOrigins.0",
  ],
  ["a user name", withOrigins(["https://me@shop.example.com"]), "allowedOrigins.0"],
  ["the null origin", withOrigins(["null"]), "allowedOrigins.0"],
  ["an origin twice", withOrigins([ORIGIN, ORIGIN]), "allowedOrigins"],
  ["no project", (w) => secretAppBody(w, { projectIds: [] }), "projectIds"],
  [
    "a project twice",
    (w) => secretAppBody(w, { projectIds: [w.projectId, w.projectId] }),
    "projectIds",
  ],
  [
    "a negative limit",
    (w) => secretAppBody(w, { endUserDailyLimitMicros: -1 }),
    "endUserDailyLimitMicros",
  ],
  [
    "a fractional limit",
    (w) => secretAppBody(w, { endUserMonthlyLimitMicros: 1.5 }),
    "endUserMonthlyLimitMicros",
  ],
  [
    "a limit as a string",
    (w) => secretAppBody(w, { endUserDailyLimitMicros: "100" }),
    "endUserDailyLimitMicros",
  ],
  ["showCost not a boolean", (w) => secretAppBody(w, { showCost: "yes" }), "showCost"],
  ["no name", (w) => secretAppBody(w, { name: "" }), "name"],
  ["an unknown field", (w) => secretAppBody(w, { secret: "mine" }), "secret"],
  [
    "no issuer",
    (w) => secretAppBody(w, { verification: { type: "secret", audience: AUDIENCE } }),
    "verification.issuer",
  ],
  [
    "no audience",
    (w) => secretAppBody(w, { verification: { type: "secret", issuer: ISSUER } }),
    "verification.audience",
  ],
  [
    "a lifetime over a day",
    withVerification({ type: "secret", maxTokenLifetimeSeconds: 86_401 }),
    "verification.maxTokenLifetimeSeconds",
  ],
  [
    "a lifetime of 0",
    withVerification({ type: "secret", maxTokenLifetimeSeconds: 0 }),
    "verification.maxTokenLifetimeSeconds",
  ],
  ["an unknown verification type", withVerification({ type: "password" }), "verification.type"],
  [
    "a secret given by the caller",
    withVerification({ type: "secret", secret: "mine" }),
    "verification.secret",
  ],
  [
    "HS256 for a public key",
    withVerification({ type: "public_key", alg: "HS256", jwk: rsaLike }),
    "verification.alg",
  ],
  [
    "alg none",
    withVerification({ type: "jwks", alg: "none", url: "https://keys.example.com/jwks" }),
    "verification.alg",
  ],
  [
    "a private key",
    withVerification({ type: "public_key", alg: "RS256", jwk: { ...rsaLike, d: "AAAA" } }),
    "verification.jwk.d",
  ],
  [
    "a symmetric key",
    withVerification({ type: "public_key", alg: "ES256", jwk: { kty: "oct", k: "AAAA" } }),
    "verification.jwk.kty",
  ],
  [
    "an RSA key for ES256",
    withVerification({ type: "public_key", alg: "ES256", jwk: rsaLike }),
    "verification.jwk.kty",
  ],
  [
    "an EC key on another curve",
    withVerification({
      type: "public_key",
      alg: "ES256",
      jwk: { kty: "EC", crv: "P-384", x: "A".repeat(43), y: "A".repeat(43) },
    }),
    "verification.jwk.crv",
  ],
  [
    "a point not on the curve",
    withVerification({
      type: "public_key",
      alg: "ES256",
      jwk: { kty: "EC", crv: "P-256", x: "A".repeat(43), y: "B".repeat(43) },
    }),
    "verification.jwk",
  ],
  [
    "a JWKS over http",
    withVerification({ type: "jwks", alg: "ES256", url: "http://keys.example.com/jwks" }),
    "verification.url",
  ],
  [
    "a JWKS on a private address",
    withVerification({ type: "jwks", alg: "ES256", url: "https://10.1.2.3/jwks" }),
    "verification.url",
  ],
  [
    "a JWKS on localhost",
    withVerification({ type: "jwks", alg: "ES256", url: "https://localhost/jwks" }),
    "verification.url",
  ],
  [
    "a JWKS at the metadata address",
    withVerification({ type: "jwks", alg: "ES256", url: "https://169.254.169.254/keys" }),
    "verification.url",
  ],
  // 127.0.0.1 passes only at the port the test binding JWKS_ALLOW_PRIVATE lists (the JWKS server).
  [
    "a JWKS on 127.0.0.1 at another port",
    withVerification({ type: "jwks", alg: "ES256", url: "http://127.0.0.1:1/jwks" }),
    "verification.url",
  ],
  [
    "a JWKS URL that is not one",
    withVerification({ type: "jwks", alg: "ES256", url: "keys" }),
    "verification.url",
  ],
];

describe("apps: bad input is 400 invalid_request naming the field, and writes nothing", () => {
  it.each(invalid)("%s", async (_name, body, field) => {
    const w = await world();
    const before = await snapshot();
    const res = await createApp(w, body(w));
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(errorCode(res)).toBe("invalid_request");
    expect((res.body as unknown as { error: { field?: string } }).error.field).toBe(field);
    expect(await snapshot()).toEqual(before);
  });

  it("the same rules hold for PATCH, which also needs at least one field", async () => {
    const w = await world();
    const app = await secretApp(w);
    const before = await snapshot();
    for (const [, body, field] of invalid.slice(0, 20)) {
      const res = await api("PATCH", `/api/apps/${app.id}`, {
        token: w.owner.token,
        body: body(w),
      });
      // Each body above carries several fields; the bad one is named.
      expect(res.status, field).toBe(400);
    }
    const empty = await api("PATCH", `/api/apps/${app.id}`, { token: w.owner.token, body: {} });
    expect(empty.status).toBe(400);
    expect(await snapshot()).toEqual(before);
  });

  it("a valid JWKS on the allowed test server is accepted (the rule above is the setting's)", async () => {
    const w = await world();
    const res = await createApp(
      w,
      withVerification({ type: "jwks", alg: "ES256", url: `${env.TEST_JWKS_URL}/keys/x` })(w),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    // Without the setting, the same URL would be refused: it is the mailbox's host with another port.
    expect(new URL(env.TEST_JWKS_URL).host).not.toBe(new URL(env.TEST_MAILBOX_URL).host);
  });
});

describe("apps go with their org, and a project's erasure leaves its apps", () => {
  it("an account erased with the org it alone belongs to takes its apps, secrets and end users", async () => {
    const ada = await signUp("ada-apps");
    const project = await api<{ id: string }>("POST", `/api/orgs/${ada.orgId}/projects`, {
      token: ada.accessToken,
      body: { name: "Storefront" },
    });
    const created = await api<AppWithSecret>("POST", `/api/orgs/${ada.orgId}/apps`, {
      token: ada.accessToken,
      body: {
        name: "Shop",
        allowedOrigins: [ORIGIN],
        projectIds: [project.body.id],
        verification: { type: "secret", issuer: ISSUER, audience: AUDIENCE },
      },
    });
    expect(created.status).toBe(201);
    const secret = created.body.secret?.secret ?? "";
    for (const sub of ["u1", "u2", "u3"]) {
      expect(
        (await exchange(created.body.id, await hs256Token(secret, { claims: { sub } }))).status,
      ).toBe(200);
    }
    const erased = await api<{ status: string; verification: { ok: boolean; findings: string[] } }>(
      "DELETE",
      "/api/me",
      { token: ada.accessToken, body: { confirm: true } },
    );
    expect(erased.status).toBe(202);
    expect(erased.body.status, JSON.stringify(erased.body)).toBe("completed");
    expect(erased.body.verification.ok).toBe(true);
    for (const table of ["apps", "app_origins", "app_projects", "app_secrets", "end_users"]) {
      expect(
        await count(`SELECT COUNT(*) AS n FROM ${table} WHERE org_id = ?`, ada.orgId),
        table,
      ).toBe(0);
    }
    expect((await exchange(created.body.id, await hs256Token(secret))).status).toBe(401);
    // A whole account's erasure scans every table and text column of D1 and of each ledger
    // (scrub, verification): seconds on a loaded machine, over the 5 s default in a full run.
  }, 30_000);

  it("the verification fails while an org erased whole still has app rows (planted)", async () => {
    const w = await world();
    const verification = await verifyErasure(env, {
      userId: null,
      orgIds: [],
      projectIds: [],
      sessionIds: [],
      deleteOrgIds: [w.orgId],
      membershipOrgId: null,
    });
    expect(verification.ok).toBe(false);
    expect(verification.findings).toEqual([
      "D1 app_origins: 1 rows of an org erased whole left",
      "D1 app_projects: 1 rows of an org erased whole left",
      "D1 apps: 1 rows of an org erased whole left",
      // The world's org also has an API key: the same verification finds it.
      "D1 api_keys: 1 keys of erased orgs left",
    ]);
  });

  it("erasing a project removes it from the apps that offered it, and the erasure verifies", async () => {
    const w = await world();
    const app = await secretApp(w);
    const other = await api<{ id: string }>("POST", `/api/orgs/${w.orgId}/projects`, {
      token: w.owner.token,
      body: { name: "Kept" },
    });
    await api("PATCH", `/api/apps/${app.id}`, {
      token: w.owner.token,
      body: { projectIds: [w.projectId, other.body.id] },
    });
    const res = await api<{ status: string; verification: { ok: boolean } }>(
      "POST",
      `/api/orgs/${w.orgId}/erasure-requests`,
      { token: w.owner.token, body: { subject: { type: "project", id: w.projectId } } },
    );
    expect(res.status).toBe(202);
    expect(res.body.status, JSON.stringify(res.body)).toBe("completed");
    expect(res.body.verification.ok).toBe(true);
    const read = await api<App>("GET", `/api/apps/${app.id}`, { token: w.owner.token });
    expect(read.body.projectIds).toEqual([other.body.id]);
  });
});
