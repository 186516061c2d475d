import { env } from "cloudflare:test";
import type { RotatedAppSecret } from "@parley/shared";
import { type CryptoKey, decodeJwt, decodeProtectedHeader, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { toBase64Url } from "../src/auth/encoding.ts";
import { verifyEndUser } from "../src/auth/end-users.ts";
import { verifyAccessToken } from "../src/auth/tokens.ts";
import { config } from "../src/env.ts";
import {
  AUDIENCE,
  createApp,
  exchange,
  hs256Token,
  ISSUER,
  jwksHits,
  keyPair,
  nowSeconds,
  ORIGIN,
  secretApp,
  secretAppBody,
  serveJwks,
  signedToken,
} from "./apps.ts";
import { signed } from "./attacks.ts";
import { api, errorCode, inOneWindow, snapshot, type World, world } from "./helpers.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const endUsers = async (appId: string) =>
  (
    await env.DB.prepare("SELECT * FROM end_users WHERE app_id = ? ORDER BY id")
      .bind(appId)
      .all<{ id: string; external_id: string; name: string | null; last_seen_at: number }>()
  ).results;

describe("the exchange: a tenant token for an end-user access token", () => {
  it("a token signed with the app's secret maps its sub to one end user of the org", async () => {
    const w = await world();
    const app = await secretApp(w);
    const res = await exchange(app.id, await hs256Token(app.secret, { claims: { name: "Ada" } }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.endUser).toEqual({ id: expect.stringMatching(/^eu_/), externalId: "user-1" });
    expect(res.headers.get("cache-control")).toBe("no-store");
    // At most the tenant token's remaining life (5 minutes here).
    expect(res.body.expiresIn).toBeGreaterThan(290);
    expect(res.body.expiresIn).toBeLessThanOrEqual(300);
    const verified = await verifyEndUser(env, res.body.accessToken);
    expect(verified).toMatchObject({
      endUserId: res.body.endUser.id,
      appId: app.id,
      orgId: w.orgId,
    });
    expect(decodeProtectedHeader(res.body.accessToken).typ).toBe("parley-end-user+jwt");
    const again = await exchange(
      app.id,
      await hs256Token(app.secret, { header: { kid: app.kid } }),
    );
    expect(again.body.endUser.id).toBe(res.body.endUser.id);
    const rows = await endUsers(app.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ external_id: "user-1", name: "Ada", org_id: w.orgId });
    // Another sub is another end user; the same sub in another app too.
    const other = await exchange(
      app.id,
      await hs256Token(app.secret, { claims: { sub: "user-2" } }),
    );
    expect(other.body.endUser.id).not.toBe(res.body.endUser.id);
    const second = await secretApp(w);
    const elsewhere = await exchange(second.id, await hs256Token(second.secret));
    expect(elsewhere.body.endUser.id).not.toBe(res.body.endUser.id);
  });

  it("an end-user access token lives at most 15 minutes", async () => {
    const w = await world();
    const app = await secretApp(w, {
      verification: {
        type: "secret",
        issuer: ISSUER,
        audience: AUDIENCE,
        maxTokenLifetimeSeconds: 3600,
      },
    });
    const res = await exchange(
      app.id,
      await hs256Token(app.secret, { claims: { exp: nowSeconds() + 3000 } }),
    );
    expect(res.status).toBe(200);
    expect(res.body.expiresIn).toBe(900);
    const claims = decodeJwt(res.body.accessToken);
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(900);
  });
});

describe("refusals: 401 with one message, nothing written", () => {
  let w: World;
  let app: { id: string; secret: string; kid: string };
  let other: { id: string; secret: string; kid: string };
  let deleted: { id: string; secret: string; kid: string };
  let deletedKeyed: { id: string; privateKey: CryptoKey };
  let reference: unknown;
  beforeAll(async () => {
    w = await world();
    app = await secretApp(w);
    other = await secretApp(w);
    deleted = await secretApp(w);
    await api("DELETE", `/api/apps/${deleted.id}`, { token: w.owner.token });
    // Deleting a secret app also drops its secrets; an app with the tenant's key has only deleted_at.
    const { privateKey, jwk } = await keyPair("ES256");
    const keyed = await createApp(
      w,
      secretAppBody(w, {
        verification: { type: "public_key", alg: "ES256", jwk, issuer: ISSUER, audience: AUDIENCE },
      }),
    );
    deletedKeyed = { id: keyed.body.id, privateKey };
    expect((await exchange(keyed.body.id, await signedToken("ES256", privateKey))).status).toBe(
      200,
    );
    await api("DELETE", `/api/apps/${keyed.body.id}`, { token: w.owner.token });
    reference = (await exchange(app.id, "not-a-token")).body;
  });
  const now = nowSeconds;
  const b64 = (value: unknown) => toBase64Url(new TextEncoder().encode(JSON.stringify(value)));

  const cases: [string, () => Promise<[appId: string, token: string]>][] = [
    [
      "signed with another secret",
      async () => [app.id, await hs256Token(`prly_as_${"x".repeat(43)}`)],
    ],
    ["app A's secret sent as app B", async () => [other.id, await hs256Token(app.secret)]],
    [
      "a kid of another app",
      async () => [app.id, await hs256Token(app.secret, { header: { kid: other.kid } })],
    ],
    [
      "an unknown kid",
      async () => [app.id, await hs256Token(app.secret, { header: { kid: "kid_x" } })],
    ],
    [
      "expired",
      async () => [
        app.id,
        await hs256Token(app.secret, { claims: { iat: now() - 400, exp: now() - 100 } }),
      ],
    ],
    [
      "expired a moment ago (no skew for exp)",
      async () => [
        app.id,
        await hs256Token(app.secret, { claims: { iat: now() - 60, exp: now() - 2 } }),
      ],
    ],
    [
      "a lifetime over the app's maximum",
      async () => [app.id, await hs256Token(app.secret, { claims: { exp: now() + 601 } })],
    ],
    [
      "issued in the future beyond the skew",
      async () => [
        app.id,
        await hs256Token(app.secret, { claims: { iat: now() + 120, exp: now() + 300 } }),
      ],
    ],
    [
      "not valid before later",
      async () => [app.id, await hs256Token(app.secret, { claims: { nbf: now() + 120 } })],
    ],
    ["no exp", async () => [app.id, await hs256Token(app.secret, { claims: { exp: undefined } })]],
    ["no iat", async () => [app.id, await hs256Token(app.secret, { claims: { iat: undefined } })]],
    ["no sub", async () => [app.id, await hs256Token(app.secret, { claims: { sub: undefined } })]],
    [
      "the wrong iss",
      async () => [
        app.id,
        await hs256Token(app.secret, { claims: { iss: "https://evil.example" } }),
      ],
    ],
    ["no iss", async () => [app.id, await hs256Token(app.secret, { claims: { iss: undefined } })]],
    [
      "the wrong aud",
      async () => [app.id, await hs256Token(app.secret, { claims: { aud: "someone-else" } })],
    ],
    ["no aud", async () => [app.id, await hs256Token(app.secret, { claims: { aud: undefined } })]],
    [
      "alg none",
      async () => [
        app.id,
        `${b64({ alg: "none", typ: "JWT" })}.${b64({ sub: "user-1", iss: ISSUER, aud: AUDIENCE, iat: now(), exp: now() + 300 })}.`,
      ],
    ],
    [
      "HS384 with the right secret",
      async () => [
        app.id,
        await new SignJWT({ sub: "user-1", iss: ISSUER, aud: AUDIENCE })
          .setProtectedHeader({ alg: "HS384" })
          .setIssuedAt()
          .setExpirationTime("5m")
          .sign(new TextEncoder().encode(app.secret)),
      ],
    ],
    [
      "ES256 to a secret app",
      async () => [app.id, await signedToken("ES256", (await keyPair("ES256")).privateKey)],
    ],
    [
      "a payload byte flipped",
      async () => {
        const [h, p, s] = (await hs256Token(app.secret)).split(".");
        const payload = JSON.parse(atob((p ?? "").replaceAll("-", "+").replaceAll("_", "/")));
        return [app.id, `${h}.${b64({ ...payload, sub: "admin" })}.${s}`];
      },
    ],
    ["a deleted app", async () => [deleted.id, await hs256Token(deleted.secret)]],
    [
      "a deleted app verified by the tenant's key",
      async () => [deletedKeyed.id, await signedToken("ES256", deletedKeyed.privateKey)],
    ],
    [
      "an app that does not exist",
      async () => ["app_00000000000000000000000000", await hs256Token(app.secret)],
    ],
    ["garbage", async () => [app.id, "not-a-token"]],
    ["three garbage parts", async () => [app.id, "a.b.c"]],
    ["a Parley member's access token", async () => [app.id, w.owner.token]],
  ];

  it.each(cases)("%s", async (_name, make) => {
    const [appId, token] = await make();
    const before = await snapshot();
    const res = await exchange(appId, token);
    expect(res.status, JSON.stringify(res.body)).toBe(401);
    expect(errorCode(res)).toBe("unauthorized");
    expect(res.body).toEqual(reference);
    expect(await snapshot()).toEqual(before);
  });

  it("a verified token whose sub is not an external id is 400 naming sub, as the erasure refuses that id, and writes nothing", async () => {
    for (const sub of ["u".repeat(129), "a\nb", 42, " padded", ""]) {
      const before = await snapshot();
      const res = await exchange(app.id, await hs256Token(app.secret, { claims: { sub } }));
      expect(res.status, JSON.stringify(sub)).toBe(400);
      expect(res.body).toMatchObject({ error: { code: "invalid_request", field: "sub" } });
      expect(await snapshot()).toEqual(before);
    }
  });

  it("the same token, properly made, is accepted (so each case above fails for its reason)", async () => {
    expect((await exchange(app.id, await hs256Token(app.secret))).status).toBe(200);
    expect((await exchange(other.id, await hs256Token(other.secret))).status).toBe(200);
    const skewed = await hs256Token(app.secret, { claims: { iat: now() + 20, exp: now() + 300 } });
    expect((await exchange(app.id, skewed)).status).toBe(200);
  });
});

describe("secret rotation", () => {
  const rotate = (w: World, appId: string, body: unknown) =>
    api<RotatedAppSecret>("POST", `/api/apps/${appId}/secrets`, { token: w.owner.token, body });

  it("the previous secret is accepted within the overlap and refused after it", {
    timeout: 15_000,
  }, async () => {
    const w = await world();
    const app = await secretApp(w);
    const res = await rotate(w, app.id, { overlapSeconds: 1 });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const fresh = res.body.secret;
    expect(fresh.secret).not.toBe(app.secret);
    expect(res.body.secrets.map((s) => s.kid)).toEqual([fresh.kid, app.kid]);
    expect(res.body.secrets[0]?.expiresAt).toBeNull();
    const ends = Date.parse(res.body.secrets[1]?.expiresAt ?? "");
    expect(ends - Date.now()).toBeLessThanOrEqual(1000);
    // Both work now, with or without a kid.
    expect((await exchange(app.id, await hs256Token(app.secret))).status).toBe(200);
    expect(
      (await exchange(app.id, await hs256Token(app.secret, { header: { kid: app.kid } }))).status,
    ).toBe(200);
    expect(
      (await exchange(app.id, await hs256Token(fresh.secret, { header: { kid: fresh.kid } })))
        .status,
    ).toBe(200);
    // The kid picks the secret: the new secret under the old kid is refused.
    expect(
      (await exchange(app.id, await hs256Token(fresh.secret, { header: { kid: app.kid } }))).status,
    ).toBe(401);
    await sleep(Math.max(0, ends - Date.now()) + 100);
    const before = await snapshot();
    expect((await exchange(app.id, await hs256Token(app.secret))).status).toBe(401);
    expect(
      (await exchange(app.id, await hs256Token(app.secret, { header: { kid: app.kid } }))).status,
    ).toBe(401);
    expect(await snapshot()).toEqual(before);
    expect((await exchange(app.id, await hs256Token(fresh.secret))).status).toBe(200);
    const read = await api<{ verification: { secrets: { kid: string }[] } }>(
      "GET",
      `/api/apps/${app.id}`,
      { token: w.owner.token },
    );
    expect(read.body.verification.secrets.map((s) => s.kid)).toEqual([fresh.kid]);
    expect(JSON.stringify(read.body)).not.toContain(fresh.secret.slice(8));
  });

  it("overlap 0 revokes at once; the default keeps the old one an hour; a second rotation ends the first overlap", async () => {
    const w = await world();
    const app = await secretApp(w);
    const byDefault = await rotate(w, app.id, {});
    expect(byDefault.status).toBe(201);
    const ends = Date.parse(byDefault.body.secrets[1]?.expiresAt ?? "");
    expect(Math.abs(ends - Date.now() - 3_600_000)).toBeLessThan(10_000);
    expect((await exchange(app.id, await hs256Token(app.secret))).status).toBe(200);
    const second = byDefault.body.secret;
    const third = await rotate(w, app.id, { overlapSeconds: 600 });
    // At most two live: the first secret's overlap ended with this rotation.
    expect(third.body.secrets.map((s) => s.kid)).toEqual([third.body.secret.kid, second.kid]);
    expect((await exchange(app.id, await hs256Token(app.secret))).status).toBe(401);
    expect((await exchange(app.id, await hs256Token(second.secret))).status).toBe(200);
    const fourth = await rotate(w, app.id, { overlapSeconds: 0 });
    expect(fourth.body.secrets.map((s) => s.kid)).toEqual([fourth.body.secret.kid]);
    for (const old of [second.secret, third.body.secret.secret]) {
      expect((await exchange(app.id, await hs256Token(old))).status).toBe(401);
    }
    expect((await exchange(app.id, await hs256Token(fourth.body.secret.secret))).status).toBe(200);
  });

  it("bad overlaps are 400; an app with the tenant's own key has no secrets to rotate (409)", async () => {
    const w = await world();
    const app = await secretApp(w);
    for (const overlapSeconds of [-1, 1.5, 7 * 86_400 + 1, "60"]) {
      const res = await rotate(w, app.id, { overlapSeconds });
      expect(res.status).toBe(400);
      expect(errorCode(res)).toBe("invalid_request");
    }
    const { jwk } = await keyPair("ES256");
    const keyed = await createApp(
      w,
      secretAppBody(w, {
        verification: { type: "public_key", alg: "ES256", jwk, issuer: ISSUER, audience: AUDIENCE },
      }),
    );
    const res = await rotate(w, keyed.body.id, {});
    expect(res.status).toBe(409);
  });
});

describe("the tenant's own keys", () => {
  it.each(["ES256", "RS256", "EdDSA"] as const)(
    "a public key, %s: its tokens pass, others are refused",
    async (alg) => {
      const w = await world();
      const { privateKey, jwk } = await keyPair(alg);
      const res = await createApp(
        w,
        secretAppBody(w, {
          verification: { type: "public_key", alg, jwk, issuer: ISSUER, audience: AUDIENCE },
        }),
      );
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const appId = res.body.id;
      expect((await exchange(appId, await signedToken(alg, privateKey))).status).toBe(200);
      // Another key of the same kind, HS256 keyed with the public key, and none: refused.
      const stranger = await keyPair(alg);
      const refused = [
        await signedToken(alg, stranger.privateKey),
        await hs256Token(JSON.stringify(jwk)),
        await hs256Token(jwk.n ?? jwk.x ?? ""),
        await signedToken(alg, privateKey, { claims: { aud: "other" } }),
      ];
      for (const token of refused) expect((await exchange(appId, token)).status).toBe(401);
    },
  );

  it("a JWKS URL that fails is not fetched again for 30 s, however many exchanges come (found by the outside probe)", async () => {
    const w = await world();
    const name = `down-${crypto.randomUUID()}`;
    const key = await keyPair("ES256", "k1");
    // Nothing published under this name yet: the tenant's server answers 404.
    const url = `${env.TEST_JWKS_URL}/keys/${name}`;
    const res = await createApp(
      w,
      secretAppBody(w, {
        verification: { type: "jwks", alg: "ES256", url, issuer: ISSUER, audience: AUDIENCE },
      }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const token = await signedToken("ES256", key.privateKey, { header: { kid: "k1" } });
    for (let i = 0; i < 5; i++) expect((await exchange(res.body.id, token)).status).toBe(401);
    expect(await jwksHits(name)).toBe(1);
  });

  it("a JWKS: fetched once and cached, the kid picks the key, the algorithm is the app's", async () => {
    const w = await world();
    const name = `tenant-${crypto.randomUUID()}`;
    const one = await keyPair("ES256", "k1");
    const two = await keyPair("ES256", "k2");
    const rsa = await keyPair("RS256", "k3");
    const url = await serveJwks(name, [one.jwk, two.jwk, rsa.jwk]);
    const res = await createApp(
      w,
      secretAppBody(w, {
        verification: { type: "jwks", alg: "ES256", url, issuer: ISSUER, audience: AUDIENCE },
      }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const appId = res.body.id;
    expect(
      (await exchange(appId, await signedToken("ES256", one.privateKey, { header: { kid: "k1" } })))
        .status,
    ).toBe(200);
    expect(
      (await exchange(appId, await signedToken("ES256", two.privateKey, { header: { kid: "k2" } })))
        .status,
    ).toBe(200);
    // Without a kid each key of the app's algorithm is tried.
    expect((await exchange(appId, await signedToken("ES256", two.privateKey))).status).toBe(200);
    expect(await jwksHits(name)).toBe(1);
    // A key of the set under another key's kid, and the set's RSA key (not the app's algorithm).
    expect(
      (await exchange(appId, await signedToken("ES256", two.privateKey, { header: { kid: "k1" } })))
        .status,
    ).toBe(401);
    expect(
      (await exchange(appId, await signedToken("RS256", rsa.privateKey, { header: { kid: "k3" } })))
        .status,
    ).toBe(401);
  });

  it.each([
    ["answers with a redirect", "/redirect?to=/keys/anything"],
    ["never answers in time", "/slow"],
    ["answers a megabyte", "/big"],
    ["answers 404", "/keys/nobody-put-this"],
  ])(
    "a JWKS URL that %s verifies nothing (401)",
    async (_name, path) => {
      const w = await world();
      const res = await createApp(
        w,
        secretAppBody(w, {
          verification: {
            type: "jwks",
            alg: "ES256",
            url: `${env.TEST_JWKS_URL}${path}`,
            issuer: ISSUER,
            audience: AUDIENCE,
          },
        }),
      );
      expect(res.status).toBe(201);
      const { privateKey } = await keyPair("ES256");
      const started = Date.now();
      const refused = await exchange(res.body.id, await signedToken("ES256", privateKey));
      expect(refused.status).toBe(401);
      expect(Date.now() - started).toBeLessThan(6_000);
    },
    15_000,
  );
});

describe("browsers: the app's origins only", () => {
  let w: World;
  let app: { id: string; secret: string; kid: string };
  beforeAll(async () => {
    w = await world();
    app = await secretApp(w);
  });

  it("from a listed origin: CORS headers for exactly that origin, refusals included", async () => {
    const ok = await exchange(app.id, await hs256Token(app.secret), { origin: ORIGIN });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(ok.headers.get("vary")).toContain("Origin");
    expect(ok.headers.get("access-control-allow-credentials")).toBeNull();
    const bad = await exchange(app.id, "not-a-token", { origin: ORIGIN });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("access-control-allow-origin")).toBe(ORIGIN);
  });

  it.each([
    "https://evil.example",
    "https://shop.example.com.evil.example",
    "http://shop.example.com",
    "https://shop.example.com:8443",
    "null",
  ])("from %s: 403, no CORS headers, nothing written", async (origin) => {
    const before = await snapshot();
    const res = await exchange(app.id, await hs256Token(app.secret), { origin });
    expect(res.status).toBe(403);
    expect(errorCode(res)).toBe("forbidden");
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(await snapshot()).toEqual(before);
  });

  it("an origin of app A does not open app B", async () => {
    const b = await secretApp(w, { allowedOrigins: ["https://other.example.com"] });
    const res = await exchange(b.id, await hs256Token(b.secret), { origin: ORIGIN });
    expect(res.status).toBe(403);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("the preflight: allowed for an origin a live app lists, refused otherwise", async () => {
    const preflight = (origin?: string) =>
      api("OPTIONS", "/api/embed/token", {
        headers: {
          ...(origin ? { origin } : {}),
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type",
        },
      });
    const ok = await preflight(ORIGIN);
    expect(ok.status).toBe(204);
    expect(ok.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(ok.headers.get("access-control-allow-methods")).toBe("GET, POST, PATCH");
    expect(ok.headers.get("access-control-allow-headers")).toBe("authorization, content-type");
    for (const origin of ["https://evil.example", undefined]) {
      const res = await preflight(origin);
      expect(res.status).toBe(403);
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
    }
    // A deleted app's origins open nothing.
    const gone = await secretApp(w, { allowedOrigins: ["https://gone.example.com"] });
    expect((await preflight("https://gone.example.com")).status).toBe(204);
    await api("DELETE", `/api/apps/${gone.id}`, { token: w.owner.token });
    expect((await preflight("https://gone.example.com")).status).toBe(403);
  });
});

describe("an end-user access token is never a member's", () => {
  it("member routes and connect tickets refuse it with 401, the agents' member objects with 404", async () => {
    const w = await world();
    const app = await secretApp(w);
    const { body } = await exchange(app.id, await hs256Token(app.secret));
    const token = body.accessToken;
    const before = await snapshot();
    const calls: [string, string, unknown?][] = [
      ["GET", "/api/me"],
      ["GET", "/api/orgs"],
      ["GET", `/api/orgs/${w.orgId}`],
      ["GET", `/api/orgs/${w.orgId}/apps`],
      ["GET", `/api/apps/${app.id}`],
      ["GET", `/api/projects/${w.projectId}`],
      ["POST", `/api/projects/${w.projectId}/sessions`, { title: "Mine" }],
      ["GET", `/api/orgs/${w.orgId}/billing`],
      ["POST", "/api/connect-tickets", { agent: "onboarding-agent", name: w.projectId }],
    ];
    for (const [method, path, payload] of calls) {
      const res = await api(method, path, { token, body: payload });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
    // The agents take it for the end user's own sessions only (test/end-user-sessions.test.ts):
    // the onboarding chat and a member's session are no more theirs than a missing object.
    for (const path of [
      `/agents/onboarding-agent/${w.projectId}/get-messages`,
      `/agents/assistant-agent/${w.sessionId}/get-messages`,
    ]) {
      expect((await api("GET", path, { token })).status, path).toBe(404);
    }
    expect(await snapshot()).toEqual(before);
    await expect(verifyAccessToken(config(env), token)).rejects.toMatchObject({
      code: "unauthorized",
    });
    // Nor is a member's token an end user's.
    await expect(verifyEndUser(env, w.owner.token)).rejects.toMatchObject({ code: "unauthorized" });
    // It is good as what it is.
    expect((await verifyEndUser(env, token)).appId).toBe(app.id);
  });

  it("forged end-user tokens, even signed by the platform's key, are refused by verifyEndUser", async () => {
    const w = await world();
    const app = await secretApp(w);
    const { body } = await exchange(app.id, await hs256Token(app.secret));
    const euId = body.endUser.id;
    const good = {
      claims: {
        aud: `${env.JWT_AUDIENCE}:end-user`,
        app: app.id,
        org: w.orgId,
        sid: undefined,
        ver: undefined,
      },
      header: { typ: "parley-end-user+jwt" },
    };
    const make = (change: { claims?: Record<string, unknown>; header?: Record<string, unknown> }) =>
      signed(euId, {
        claims: { ...good.claims, ...change.claims },
        header: { ...good.header, ...change.header },
      });
    // The helper makes a good one (so each refusal below is for its one change).
    expect((await verifyEndUser(env, await make({}))).endUserId).toBe(euId);
    const forged: [string, Parameters<typeof make>[0]][] = [
      ["a member's typ", { header: { typ: "JWT" } }],
      ["a member's audience", { claims: { aud: env.JWT_AUDIENCE } }],
      ["no app claim", { claims: { app: undefined } }],
      ["another org", { claims: { org: w.otherOrgId } }],
      ["another app", { claims: { app: w.appId } }],
      ["an end user that does not exist", { claims: { sub: "eu_00000000000000000000000000" } }],
      ["expired", { claims: { iat: nowSeconds() - 3600, exp: nowSeconds() - 60 } }],
      ["issued too long ago", { claims: { iat: nowSeconds() - 7200 } }],
      ["another issuer", { claims: { iss: "evil" } }],
    ];
    for (const [name, change] of forged) {
      await expect(verifyEndUser(env, await make(change)), name).rejects.toMatchObject({
        code: "unauthorized",
      });
    }
  });

  it("deleting the app stops its end users' tokens at once", async () => {
    const w = await world();
    const app = await secretApp(w);
    const { body } = await exchange(app.id, await hs256Token(app.secret));
    expect((await verifyEndUser(env, body.accessToken)).endUserId).toBe(body.endUser.id);
    await api("DELETE", `/api/apps/${app.id}`, { token: w.owner.token });
    await expect(verifyEndUser(env, body.accessToken)).rejects.toMatchObject({
      code: "unauthorized",
    });
  });
});

describe("rate limits of the exchange", () => {
  it("60 a minute per app and client address, then 429 and nothing written; other clients go on", {
    timeout: 60_000,
  }, async () => {
    await inOneWindow(15_000);
    const w = await world();
    const app = await secretApp(w);
    const address = "10.99.0.1";
    const token = await hs256Token(app.secret);
    const codes: number[] = [];
    for (let i = 0; i < 60; i++) {
      codes.push((await exchange(app.id, token, { "cf-connecting-ip": address })).status);
    }
    expect(codes.every((c) => c === 200)).toBe(true);
    const before = await snapshot();
    const refused = await exchange(app.id, token, { "cf-connecting-ip": address });
    expect(refused.status).toBe(429);
    expect(errorCode(refused)).toBe("rate_limited");
    expect(await snapshot()).toEqual(before);
    expect((await exchange(app.id, token)).status).toBe(200);
  });

  it("600 good exchanges a minute per app from all clients together; refused tokens do not use it up", {
    timeout: 120_000,
  }, async () => {
    await inOneWindow(40_000);
    const w = await world();
    const app = await secretApp(w);
    const other = await secretApp(w);
    // A flood of bad tokens from many addresses (found by the outside probe) locks nobody out.
    const bad: number[] = [];
    for (let i = 0; i < 600; i++) bad.push((await exchange(app.id, "not-a-token")).status);
    expect(bad.every((s) => s === 401)).toBe(true);
    const token = await hs256Token(app.secret);
    const good: number[] = [];
    for (let i = 0; i < 600; i++) good.push((await exchange(app.id, token)).status);
    expect(good.every((s) => s === 200)).toBe(true);
    expect((await exchange(app.id, token)).status).toBe(429);
    expect((await exchange(other.id, await hs256Token(other.secret))).status).toBe(200);
  });
});
