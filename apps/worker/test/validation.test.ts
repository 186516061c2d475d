import { describe, expect, it } from "vitest";
import { MAX_BODY_BYTES } from "../src/app.ts";
import { api, errorCode, snapshot, uniqueEmail, type World, world } from "./helpers.ts";

/**
 * Bad input on every write route: each gets `invalid_request` (naming the field where there is one)
 * or `payload_too_large`, and nothing is written.
 */
interface WriteRoute {
  name: string;
  method: string;
  path: (w: World) => string;
  token: (w: World) => string | undefined;
  valid: (w: World) => Record<string, unknown>;
  /** Each case: a body and the field the error must name. */
  bad: [label: string, body: (w: World) => unknown, field: string | undefined][];
}

const routes: WriteRoute[] = [
  {
    name: "signup",
    method: "POST",
    path: () => "/api/auth/signup",
    token: () => undefined,
    valid: () => ({ email: uniqueEmail(), password: "long enough pw", name: "N" }),
    bad: [
      [
        "email of the wrong type",
        () => ({ email: 42, password: "long enough pw", name: "N" }),
        "email",
      ],
      ["not an email", () => ({ email: "nope", password: "long enough pw", name: "N" }), "email"],
      [
        "short password",
        () => ({ email: uniqueEmail(), password: "short", name: "N" }),
        "password",
      ],
      ["missing name", () => ({ email: uniqueEmail(), password: "long enough pw" }), "name"],
      [
        "unknown field",
        () => ({ email: uniqueEmail(), password: "long enough pw", name: "N", role: "owner" }),
        "role",
      ],
    ],
  },
  {
    name: "login",
    method: "POST",
    path: () => "/api/auth/login",
    token: () => undefined,
    valid: () => ({ email: uniqueEmail(), password: "x" }),
    bad: [
      ["missing password", () => ({ email: uniqueEmail() }), "password"],
      ["array body", () => [], undefined],
    ],
  },
  {
    name: "create org",
    method: "POST",
    path: () => "/api/orgs",
    token: (w) => w.member.token,
    valid: () => ({ name: "Org" }),
    bad: [
      ["name of the wrong type", () => ({ name: ["x"] }), "name"],
      ["empty name", () => ({ name: "   " }), "name"],
      ["name too long", () => ({ name: "x".repeat(101) }), "name"],
      ["unknown field", () => ({ name: "x", ownerId: "usr_x" }), "ownerId"],
    ],
  },
  {
    name: "add member",
    method: "POST",
    path: (w) => `/api/orgs/${w.orgId}/members`,
    token: (w) => w.owner.token,
    valid: (w) => ({ email: w.newcomer.email, role: "member" }),
    bad: [
      ["unknown role", (w) => ({ email: w.newcomer.email, role: "god" }), "role"],
      ["missing email", () => ({ role: "member" }), "email"],
      ["null body", () => null, undefined],
    ],
  },
  {
    name: "change role",
    method: "PATCH",
    path: (w) => `/api/orgs/${w.orgId}/members/${w.member.id}`,
    token: (w) => w.owner.token,
    valid: () => ({ role: "admin" }),
    bad: [
      ["role of the wrong type", () => ({ role: 1 }), "role"],
      ["empty object", () => ({}), "role"],
    ],
  },
  {
    name: "create project",
    method: "POST",
    path: (w) => `/api/orgs/${w.orgId}/projects`,
    token: (w) => w.member.token,
    valid: () => ({ name: "P" }),
    bad: [
      ["memory that is not an object", () => ({ name: "P", memory: [1, 2] }), "memory"],
      ["memory that is a string", () => ({ name: "P", memory: "notes" }), "memory"],
      ["missing name", () => ({ memory: {} }), "name"],
      ["unknown field", () => ({ name: "P", orgId: "org_x" }), "orgId"],
    ],
  },
  {
    name: "update project",
    method: "PATCH",
    path: (w) => `/api/projects/${w.projectId}`,
    token: (w) => w.member.token,
    valid: () => ({ name: "Q" }),
    bad: [
      ["nothing to update", () => ({}), undefined],
      ["name of the wrong type", () => ({ name: 5 }), "name"],
      ["unknown field", () => ({ deletedAt: 1 }), "deletedAt"],
    ],
  },
  {
    name: "create session",
    method: "POST",
    path: (w) => `/api/projects/${w.projectId}/sessions`,
    token: (w) => w.member.token,
    valid: () => ({ title: "T" }),
    bad: [
      ["title of the wrong type", () => ({ title: 1 }), "title"],
      ["unknown field (identity in the body)", (w) => ({ ownerId: w.owner.id }), "ownerId"],
    ],
  },
  {
    name: "create API key",
    method: "POST",
    path: (w) => `/api/orgs/${w.orgId}/api-keys`,
    token: (w) => w.owner.token,
    valid: () => ({ name: "CI", scopes: ["usage:read"] }),
    bad: [
      ["unknown scope", () => ({ name: "CI", scopes: ["admin"] }), "scopes.0"],
      ["no scope", () => ({ name: "CI", scopes: [] }), "scopes"],
      ["a scope twice", () => ({ name: "CI", scopes: ["usage:read", "usage:read"] }), "scopes"],
      ["scopes not a list", () => ({ name: "CI", scopes: "usage:read" }), "scopes"],
      ["missing name", () => ({ scopes: ["usage:read"] }), "name"],
      [
        "expiry in the past",
        () => ({ name: "CI", scopes: ["usage:read"], expiresAt: "2020-01-01" }),
        "expiresAt",
      ],
      [
        "expiry that is no date",
        () => ({ name: "CI", scopes: ["usage:read"], expiresAt: "tomorrow" }),
        "expiresAt",
      ],
      [
        "unknown field (the secret chosen by the client)",
        () => ({ name: "CI", scopes: ["usage:read"], secret: "prly_sk_mine" }),
        "secret",
      ],
      [
        "unknown field (another org)",
        (w) => ({ name: "CI", scopes: ["usage:read"], orgId: w.otherOrgId }),
        "orgId",
      ],
    ],
  },
];

const cases = routes.flatMap((route) => [
  ...route.bad.map(
    ([label, body, field]) =>
      [route.name, label, route, { kind: "json" as const, body, field }] as const,
  ),
  [
    route.name,
    "malformed JSON",
    route,
    { kind: "raw" as const, raw: '{"name": ', contentType: "application/json" },
  ] as const,
  [
    route.name,
    "not JSON at all",
    route,
    { kind: "raw" as const, raw: "name=x", contentType: "application/x-www-form-urlencoded" },
  ] as const,
  [
    route.name,
    "oversized body",
    route,
    {
      kind: "raw" as const,
      raw: JSON.stringify({ name: "x".repeat(MAX_BODY_BYTES) }),
      contentType: "application/json",
    },
  ] as const,
]);

describe("bad input on every write route", () => {
  it.each(cases)("%s: %s", async (_name, _label, route, input) => {
    const w = await world();
    const before = await snapshot();
    const headers: Record<string, string> = {};
    const token = route.token(w);
    if (token) headers.authorization = `Bearer ${token}`;
    const res =
      input.kind === "json"
        ? await api(route.method, route.path(w), { headers, body: input.body(w) })
        : await api(route.method, route.path(w), {
            headers: { ...headers, "content-type": input.contentType },
            rawBody: input.raw,
          });
    if (input.kind === "raw" && input.raw.length > MAX_BODY_BYTES) {
      expect(res.status).toBe(413);
      expect(errorCode(res)).toBe("payload_too_large");
    } else {
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(errorCode(res)).toBe("invalid_request");
      if (input.kind === "json" && input.field) {
        expect(res.body).toMatchObject({ error: { field: input.field } });
        expect((res.body as { error: { message: string } }).error.message).toContain(input.field);
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  it.each(routes)(
    "$name accepts its valid body (so the refusals above are about the input)",
    async (route) => {
      const w = await world();
      const token = route.token(w);
      const res = await api(route.method, route.path(w), { token, body: route.valid(w) });
      // login with an unknown email is a well-formed request refused for its credentials
      expect(route.name === "login" ? [401] : [200, 201]).toContain(res.status);
    },
  );

  it("refuses a bad page size or cursor type in the query", async () => {
    const w = await world();
    for (const q of ["limit=0", "limit=101", "limit=abc", "unknown=1"]) {
      const res = await api("GET", `/api/orgs/${w.orgId}/projects?${q}`, { token: w.member.token });
      expect(res.status, q).toBe(400);
      expect(errorCode(res)).toBe("invalid_request");
    }
  });
});

describe("a refusal names every problem of the input at once", () => {
  it("a new app with three bad fields: the first in field and message, all three in issues", async () => {
    const w = await world();
    const before = await snapshot();
    const res = await api<{
      error: { code: string; field?: string; issues?: { field: string; message: string }[] };
    }>("POST", `/api/orgs/${w.orgId}/apps`, {
      token: w.owner.token,
      body: {
        name: "",
        allowedOrigins: ["https://ok.example", "not an origin"],
        projectIds: [],
        verification: { type: "secret", issuer: "i", audience: "a" },
        endUserDailyLimitMicros: -5,
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_request");
    const fields = (res.body.error.issues ?? []).map((issue) => issue.field);
    expect(fields).toEqual(
      expect.arrayContaining(["name", "allowedOrigins.1", "projectIds", "endUserDailyLimitMicros"]),
    );
    expect(res.body.error.field).toBe(fields[0]);
    for (const issue of res.body.error.issues ?? []) expect(issue.message).not.toBe("");
    expect(await snapshot()).toEqual(before);
  });

  it("one problem: field and message only, no issues list", async () => {
    const w = await world();
    const res = await api<{ error: { field?: string; issues?: unknown } }>(
      "POST",
      `/api/orgs/${w.orgId}/projects`,
      { token: w.owner.token, body: { name: "" } },
    );
    expect(res.status).toBe(400);
    expect(res.body.error.field).toBe("name");
    expect(res.body.error.issues).toBeUndefined();
  });
});
