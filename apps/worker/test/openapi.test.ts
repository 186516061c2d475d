import { env } from "cloudflare:test";
import { findTargetHandler } from "hono/utils/handler";
import { uniqueSymbol } from "hono-openapi";
import { describe, expect, it } from "vitest";
import { app } from "../src/app.ts";
import { noBody } from "../src/http/validate.ts";
import { hs256Token, ORIGIN, secretAppBody } from "./apps.ts";
import { endUserToken, PAGE } from "./end-users.ts";
import {
  type ApiOptions,
  type ApiResponse,
  api,
  apiWithVars,
  finishExport,
  randomClientAddress,
  signUp,
  uniqueEmail,
  world,
} from "./helpers.ts";
import { indexed } from "./knowledge.ts";
import { linkSecret, nextMail } from "./mail.ts";
import { checkoutEvent, disputeEvent, refundEvent, sign, startedSession, uid } from "./stripe.ts";

/**
 * The OpenAPI document (docs/2026-12-02-openapi.md): it is served, it names every route of the
 * app, and real answers match the response schemas it was generated from. The schemas are read
 * from the routes' own `describeRoute(...)` (the resolver keeps the zod schema's validator), so
 * what is checked here is exactly what the document says.
 */

interface Operation {
  key: string;
  pattern: RegExp;
  specificity: number;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

type Document = {
  openapi: string;
  paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
  components: {
    securitySchemes: Record<string, unknown>;
    responses: Record<string, unknown>;
  };
};

const toOpenApiPath = (path: string) => path.replace(/:(\w+)/g, "{$1}");

/** The app's routes under /api: handlers and their descriptions, not middleware or preflights. */
const apiRoutes = () =>
  [
    ...new Set(
      app.routes
        .filter((r) => r.path.startsWith("/api/") && r.method !== "ALL" && r.method !== "OPTIONS")
        .map((r) => `${r.method} ${r.path}`),
    ),
  ].sort();

/** Each documented operation with its responses, as the routes declared them. */
const operations: Operation[] = app.routes.flatMap((route) => {
  const marked = (findTargetHandler(route.handler) as unknown as Record<symbol, unknown>)[
    uniqueSymbol
  ] as { spec?: { responses?: Operation["responses"] } } | undefined;
  if (!marked?.spec?.responses) return [];
  const source = route.path.replace(/[.]/g, "\\.").replace(/:\w+/g, "[^/]+");
  return [
    {
      key: `${route.method} ${route.path}`,
      pattern: new RegExp(`^${source}$`),
      specificity: route.path.replace(/:\w+/g, "").length,
      responses: marked.spec.responses,
    },
  ];
});

const covered = new Set<string>();

/**
 * Calls the API and checks the answer against the document: the status is one the operation
 * lists, and a JSON body validates against that status's schema.
 */
async function call<T = Record<string, unknown>>(
  method: string,
  path: string,
  options: ApiOptions,
  status: number,
  vars?: Record<string, string>,
): Promise<ApiResponse<T>> {
  const res = vars
    ? await apiWithVars<T>(vars, method, path, options)
    : await api<T>(method, path, options);
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(status);
  const bare = path.split("?")[0] ?? path;
  const op = operations
    .filter((o) => o.key.startsWith(`${method} `) && o.pattern.test(bare))
    .sort((a, b) => b.specificity - a.specificity)[0];
  if (!op) throw new Error(`${method} ${path} matches no documented operation`);
  const response = op.responses[String(status)];
  expect(response, `${op.key} does not document ${status}`).toBeDefined();
  const schema = response?.content?.["application/json"]?.schema as
    | { validate?: (value: unknown) => { issues?: unknown } | Promise<{ issues?: unknown }> }
    | undefined;
  if (schema?.validate) {
    const result = await schema.validate(res.body);
    expect(result.issues, `${op.key} ${status} answered ${JSON.stringify(res.body)}`).toBe(
      undefined,
    );
  } else if (status === 204) {
    expect(res.body).toBeNull();
  }
  covered.add(op.key);
  return res;
}

/** Operations with no conformance check here, and why. Keep it short. */
const notDriven: Record<string, string> = {};

describe("the OpenAPI document", () => {
  it("is served without a sign-in, as OpenAPI 3.1, with the auth schemes and the error shape", async () => {
    const res = await call<Document>("GET", "/api/openapi.json", {}, 200);
    expect(res.body.openapi.startsWith("3.1")).toBe(true);
    expect(Object.keys(res.body.components.securitySchemes)).toEqual(
      expect.arrayContaining(["memberToken", "apiKey", "endUserToken"]),
    );
    expect(res.body.components.responses.Error).toBeDefined();
    // Every reference points at something the document has.
    const refs = [...JSON.stringify(res.body).matchAll(/"\$ref":"#\/([^"]+)"/g)].map((m) => m[1]);
    const unresolved = [...new Set(refs)].filter((ref) => {
      let node: unknown = res.body;
      for (const part of (ref ?? "").split("/")) {
        node = (node as Record<string, unknown> | undefined)?.[part];
      }
      return node === undefined;
    });
    expect(refs.length).toBeGreaterThan(50);
    expect(unresolved).toEqual([]);
  });

  it("has its reference page at /api-reference, from the web app's assets", async () => {
    const res = await api<string>("GET", "/api-reference");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.body).toContain('id="api-reference"');
  });

  it("names every route of the app (a new route without describeRoute fails here)", async () => {
    const doc = (await api<Document>("GET", "/api/openapi.json")).body;
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
      ),
    );
    const routes = apiRoutes();
    expect(routes.length).toBeGreaterThan(50);
    const missing = routes.filter(
      (r) => !documented.has(r.replace(/ .*/, (m) => ` ${toOpenApiPath(m.slice(1))}`)),
    );
    expect(missing).toEqual([]);
    // Each operation says what success looks like: a 2xx with a schema, or one with no body.
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const success = Object.keys(operation.responses ?? {}).filter((s) => s.startsWith("2"));
        expect(success, `${method} ${path}`).not.toEqual([]);
      }
    }
  });

  it("every POST, PUT and PATCH says what body it takes: a schema, or none at all (noBody)", async () => {
    const doc = (await api<Document>("GET", "/api/openapi.json")).body;
    // The Stripe webhook reads the raw payload it verifies; nothing else may skip the decision.
    const raw = new Set(["POST /api/webhooks/stripe"]);
    const undecided = apiRoutes().filter((route) => {
      const [method = "", path = ""] = route.split(" ");
      if (!["POST", "PUT", "PATCH"].includes(method) || raw.has(route)) return false;
      const operation = doc.paths[toOpenApiPath(path)]?.[method.toLowerCase()] as
        | { requestBody?: unknown }
        | undefined;
      const refusesBodies = app.routes.some(
        (r) => r.method === method && r.path === path && r.handler === noBody,
      );
      return operation?.requestBody === undefined && !refusesBodies;
    });
    expect(undecided).toEqual([]);
  });
});

describe("answers match the document", () => {
  it("auth and one's account", async () => {
    await call("GET", "/api/health", {}, 200);
    const email = uniqueEmail("oa");
    const password = "a long enough password";
    await call("POST", "/api/auth/signup", { body: { email, password, name: "Oa" } }, 201);
    const login = await call<{ accessToken: string }>(
      "POST",
      "/api/auth/login",
      { body: { email, password } },
      200,
    );
    const token = login.body.accessToken;
    const cookie = /parley_refresh=([^;]*)/.exec(login.headers.get("set-cookie") ?? "")?.[1];
    const withCookie = { headers: { cookie: `parley_refresh=${cookie}` } };
    const refreshed = await call("POST", "/api/auth/refresh", withCookie, 200);
    const rotated = /parley_refresh=([^;]*)/.exec(refreshed.headers.get("set-cookie") ?? "")?.[1];
    await call("GET", "/api/me", { token }, 200);
    await call("PATCH", "/api/me", { token, body: { name: "Oa Renamed" } }, 200);
    await call(
      "POST",
      "/api/me/password",
      { token, body: { currentPassword: password, newPassword: "another long password" } },
      204,
    );
    await call(
      "POST",
      "/api/auth/logout",
      { headers: { cookie: `parley_refresh=${rotated}` } },
      204,
    );
    const gone = await signUp("oa-gone");
    await call("DELETE", "/api/me", { token: gone.accessToken, body: { confirm: true } }, 202);
  });

  it("mail: reset, verification, email change and billing mail", async () => {
    const reset = { headers: { "cf-connecting-ip": randomClientAddress() } };
    const ada = await signUp("oa-mail", { verified: false });
    await call("POST", "/api/auth/password-reset", { ...reset, body: { email: ada.email } }, 202);
    const resetToken = linkSecret(await nextMail(ada.email, "password_reset"), "/reset-password");
    await call(
      "POST",
      "/api/auth/password-reset/confirm",
      { body: { token: resetToken, password: "a brand new long password" } },
      204,
    );
    const bo = await signUp("oa-verify", { verified: false });
    // The sign-up's own link first, so the resend's is the one after it.
    const after = (await nextMail(bo.email, "verify_email")).id;
    await call("POST", "/api/me/email-verification", { token: bo.accessToken }, 202);
    const verifyToken = linkSecret(
      await nextMail(bo.email, "verify_email", { after }),
      "/verify-email",
    );
    await call("POST", "/api/auth/verify-email", { body: { token: verifyToken } }, 200);
    await call(
      "POST",
      "/api/me/email",
      { token: bo.accessToken, body: { newEmail: uniqueEmail("oa-new"), password: bo.password } },
      202,
    );
    await call("GET", "/api/me/notifications", { token: bo.accessToken }, 200);
    await call(
      "PATCH",
      `/api/me/notifications/${bo.orgId}`,
      { token: bo.accessToken, body: { receipts: true, limitAlerts: true } },
      200,
    );
  });

  it("orgs, members, projects and sessions", async () => {
    const w = await world();
    const owner = { token: w.owner.token };
    await call("GET", "/api/orgs", owner, 200);
    await call("POST", "/api/orgs", { ...owner, body: { name: "Second" } }, 201);
    await call("GET", `/api/orgs/${w.orgId}`, owner, 200);
    await call("GET", `/api/orgs/${w.orgId}/members`, owner, 200);
    const added = await call<{ url: string }>(
      "POST",
      `/api/orgs/${w.orgId}/members`,
      { ...owner, body: { email: w.newcomer.email, role: "member" } },
      201,
    );
    // Adding is inviting: the newcomer joins by accepting the link.
    const link = new URL(added.body.url).hash.slice(1);
    await call(
      "POST",
      "/api/invitations/accept",
      { token: w.newcomer.token, body: { token: link } },
      201,
    );
    const member = `/api/orgs/${w.orgId}/members/${w.newcomer.id}`;
    await call("PATCH", member, { ...owner, body: { role: "admin" } }, 200);
    await call("DELETE", member, owner, 204);
    // Removed, they are a former member, listed for erasure.
    const former = await call<{ items: { userId: string }[] }>(
      "GET",
      `/api/orgs/${w.orgId}/former-members`,
      owner,
      200,
    );
    expect(former.body.items.map((item) => item.userId)).toEqual([w.newcomer.id]);

    await call("GET", `/api/orgs/${w.orgId}/projects`, owner, 200);
    const created = await call<{ id: string }>(
      "POST",
      `/api/orgs/${w.orgId}/projects`,
      { ...owner, body: { name: "Docs", memory: { a: [1, { b: null }] } } },
      201,
    );
    const projectPath = `/api/projects/${created.body.id}`;
    await call("GET", projectPath, owner, 200);
    await call("PATCH", projectPath, { ...owner, body: { name: "Docs 2" } }, 200);
    await call("GET", `${projectPath}/sessions`, owner, 200);
    const started = await call<{ id: string }>(
      "POST",
      `${projectPath}/sessions`,
      { ...owner, body: { title: "First" } },
      201,
    );
    await call("GET", `/api/orgs/${w.orgId}/sessions`, owner, 200);
    await call("GET", `/api/orgs/${w.orgId}/sessions`, { token: w.apiKey.secret }, 200);
    const sessionPath = `/api/sessions/${started.body.id}`;
    await call("GET", sessionPath, owner, 200);
    await call("GET", `${sessionPath}/limits`, owner, 200);
    await call("PATCH", sessionPath, { ...owner, body: { title: "Renamed" } }, 200);
    await call(
      "POST",
      "/api/connect-tickets",
      { ...owner, body: { agent: "assistant-agent", name: started.body.id } },
      201,
    );
    await call("DELETE", sessionPath, owner, 204);
    await call("DELETE", projectPath, owner, 204);
  });

  it("invitations", async () => {
    const w = await world();
    const owner = { token: w.owner.token };
    const path = `/api/orgs/${w.orgId}/invitations`;
    const invitee = uniqueEmail("invitee");
    const invited = await call<{ url: string }>(
      "POST",
      path,
      { ...owner, body: { email: invitee, role: "member" } },
      201,
    );
    const secret = new URL(invited.body.url).hash.slice(1);
    await call("GET", path, owner, 200);
    await call("POST", "/api/auth/invitations/preview", { body: { token: secret } }, 200);
    // The deprecated forms, with the secret in the path, answer the same until their last day
    // (set ahead here: the test must not depend on today's date), then 410.
    const open = { INVITATION_PATH_FORMS_END: "2999-12-31" };
    const ended = { INVITATION_PATH_FORMS_END: "2000-01-01" };
    await call("GET", `/api/auth/invitations/${secret}`, {}, 200, open);
    await call("GET", `/api/auth/invitations/${secret}`, {}, 410, ended);
    const person = await signUp("invitee", { email: invitee });
    await call(
      "POST",
      `/api/invitations/${secret}/accept`,
      { token: person.accessToken },
      201,
      open,
    );
    const other = await call<{ id: string }>(
      "POST",
      path,
      { ...owner, body: { email: uniqueEmail("other"), role: "member" } },
      201,
    );
    await call("DELETE", `${path}/${other.body.id}`, owner, 200);
  });

  it("billing", async () => {
    const w = await world();
    const owner = { token: w.owner.token };
    const base = `/api/orgs/${w.orgId}/billing`;
    await call("GET", base, owner, 200);
    await call(
      "PATCH",
      `${base}/settings`,
      { ...owner, body: { lowBalanceMicros: 5_000_000 } },
      200,
    );
    await call("GET", `${base}/ledger`, owner, 200);
    await call("GET", `${base}/usage?groupBy=member`, owner, 200);
    await call("GET", `${base}/usage`, { token: w.apiKey.secret }, 200);
    await call("GET", `${base}/usage.csv`, owner, 200);
    await call("GET", `${base}/activity`, owner, 200);
    await call("GET", `${base}/alerts`, owner, 200);
    const limit = { period: "week", amountMicros: 5_000_000 };
    await call("PUT", `${base}/limits/me`, { ...owner, body: limit }, 200);
    await call("PUT", `${base}/limits/members/${w.member.id}`, { ...owner, body: limit }, 200);
    await call("PUT", `${base}/limits/projects/${w.projectId}`, { ...owner, body: limit }, 200);
    await call("GET", `${base}/limits`, owner, 200);
    await call("GET", `${base}/limits/me`, owner, 200);
    await call("POST", `${base}/checkout`, { ...owner, body: { amountMicros: 5_000_000 } }, 201);
    await call("POST", `${base}/portal`, owner, 201);
    await call("GET", `${base}/auto-top-up`, owner, 200);
    const autoTopUp = {
      enabled: false,
      thresholdMicros: 5_000_000,
      amountMicros: 20_000_000,
      monthlyCapMicros: 100_000_000,
    };
    await call("PUT", `${base}/auto-top-up`, { ...owner, body: autoTopUp }, 200);
    // Turning it on without a saved card is the documented 409.
    await call(
      "PUT",
      `${base}/auto-top-up`,
      { ...owner, body: { ...autoTopUp, enabled: true } },
      409,
    );
    await call("POST", `${base}/auto-top-up/card`, owner, 201);
    await call("DELETE", `${base}/auto-top-up/card`, owner, 200);
    const session = { id: uid("cs"), paymentIntent: uid("pi"), cents: 500 };
    await startedSession(w.orgId, session);
    const event = checkoutEvent(w.orgId, "checkout.session.completed", session);
    const payload = JSON.stringify(event);
    await call(
      "POST",
      "/api/webhooks/stripe",
      {
        rawBody: payload,
        headers: { "content-type": "application/json", "stripe-signature": await sign(payload) },
      },
      200,
    );
    // The payment the webhook recorded; its receipt is Stripe's to say (this one is not at Stripe).
    await call("GET", `${base}/payments`, owner, 200);
  });

  it("the operator's grants and allowance, and the grants they show in the balance", async () => {
    const w = await world();
    const secret = (env as { OPERATOR_SECRET?: string }).OPERATOR_SECRET ?? "";
    const headers = { authorization: `Bearer ${secret}` };
    const path = `/api/operator/orgs/${w.orgId}`;
    const grant = {
      amountMicros: 1_000_000,
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      idempotencyKey: uid("openapi"),
    };
    await call("POST", `${path}/grants`, { headers, body: grant }, 200);
    await call("POST", `${path}/grants`, { headers, body: { ...grant, amountMicros: 2 } }, 409);
    await call("POST", `${path}/grants`, { body: grant }, 401);
    await call("POST", "/api/operator/orgs/org_missing/grants", { headers, body: grant }, 404);
    await call("POST", `${path}/grants`, { headers, body: { amountMicros: 0 } }, 400);
    const allowance = { amountMicros: 3_000_000, billingDay: 5 };
    await call("PUT", `${path}/allowance`, { headers, body: allowance }, 200);
    await call("PUT", `${path}/allowance`, { headers, body: { billingDay: 40 } }, 400);
    await call("PUT", `${path}/allowance`, { body: allowance }, 401);
    await call(
      "PUT",
      "/api/operator/orgs/org_missing/allowance",
      { headers, body: allowance },
      404,
    );
    const summary = await call<{ grants: unknown[] }>(
      "GET",
      `/api/orgs/${w.orgId}/billing`,
      { token: w.member.token },
      200,
    );
    expect(summary.body.grants).toHaveLength(2);
    await call("GET", `/api/orgs/${w.orgId}/billing/ledger`, { token: w.owner.token }, 200);
    // What Stripe did that credits did not follow: a session Parley never made (listed), and a
    // $5 payment refunded and then disputed (its excess listed).
    const signed = async (event: object) => {
      const payload = JSON.stringify(event);
      const res = await api<{ outcome: string }>("POST", "/api/webhooks/stripe", {
        rawBody: payload,
        headers: { "content-type": "application/json", "stripe-signature": await sign(payload) },
      });
      expect(res.status).toBe(200);
      return res.body.outcome;
    };
    const foreign = { id: uid("cs"), paymentIntent: uid("pi"), cents: 1_234 };
    expect(await signed(checkoutEvent(w.orgId, "checkout.session.completed", foreign))).toBe(
      "unrecognized",
    );
    const paid = { id: uid("cs"), paymentIntent: uid("pi"), cents: 500 };
    await startedSession(w.orgId, paid);
    await signed(checkoutEvent(w.orgId, "checkout.session.completed", paid));
    await signed(refundEvent(null, paid.paymentIntent, 500, 500));
    await signed(disputeEvent(paid.paymentIntent, 500, "charge.dispute.funds_withdrawn"));
    for (const list of ["unrecognized", "excess"]) {
      const stripe = `/api/operator/stripe/${list}`;
      const page = await call<{ items: unknown[] }>("GET", `${stripe}?limit=2`, { headers }, 200);
      expect(page.body.items.length, list).toBeGreaterThan(0);
      await call("GET", `${stripe}?cursor=nope`, { headers }, 400);
      await call("GET", stripe, {}, 401);
    }
  });

  it("the model catalogue, allowed models and assistant profiles", async () => {
    const w = await world();
    const owner = { token: w.owner.token };
    const secret = (env as { OPERATOR_SECRET?: string }).OPERATOR_SECRET ?? "";
    const headers = { authorization: `Bearer ${secret}` };
    await call("GET", "/api/models", owner, 200);
    const id = `openapi/model-${crypto.randomUUID().slice(0, 8)}`;
    const model = {
      id,
      provider: {
        type: "openai-compatible",
        baseUrl: "https://llm.example/v1",
        apiKeySecret: null,
      },
      displayName: "OpenAPI model",
      contextWindow: 8_000,
      maxOutputTokens: 1_000,
      capabilities: { tools: true, reasoning: false },
      pricing: { prompt: "0.000001", completion: "0.000002", input_cache_read: "0.0000001" },
    };
    await call("PUT", "/api/operator/models", { headers, body: model }, 200);
    await call(
      "PUT",
      "/api/operator/models",
      { headers, body: { ...model, pricing: { prompt: "0.0000000000001", completion: "0" } } },
      400,
    );
    await call("GET", "/api/operator/models", { headers }, 200);
    await call("POST", "/api/operator/models/retire", { headers, body: { id } }, 200);
    await call("POST", "/api/operator/models/retire", { headers, body: { id: "parley/dev" } }, 409);
    const models = `/api/orgs/${w.orgId}/models`;
    await call("GET", models, owner, 200);
    await call(
      "PUT",
      models,
      { ...owner, body: { models: ["parley/dev", "parley/dev-fast"] } },
      200,
    );
    await call("PUT", models, { ...owner, body: { models: [id] } }, 400);
    const profiles = `/api/orgs/${w.orgId}/profiles`;
    const made = await call<{ id: string }>(
      "POST",
      profiles,
      { ...owner, body: { name: "Support", model: "parley/dev-fast", instructions: "Be kind." } },
      201,
    );
    await call("GET", profiles, owner, 200);
    const path = `/api/profiles/${made.body.id}`;
    await call("GET", path, owner, 200);
    await call("PATCH", path, { ...owner, body: { welcome: "Hello!" } }, 200);
    await call("PATCH", path, { ...owner, body: { name: "Late", baseVersion: 1 } }, 409);
    await call("PATCH", path, { ...owner, body: { model: "parley/dev-large" } }, 400);
    await call("GET", `${path}/versions`, owner, 200);
    await call("GET", `${path}/versions/1`, owner, 200);
    await call("POST", `${path}/rollback`, { ...owner, body: { version: 1 } }, 200);
    await call("GET", `${path}/prompt-preview?projectId=${w.projectId}`, owner, 200);
    await call("GET", `/api/orgs/${w.orgId}/preview-profile`, owner, 200);
    await call(
      "PUT",
      `/api/orgs/${w.orgId}/preview-profile`,
      { ...owner, body: { profileId: made.body.id } },
      200,
    );
    await call("PUT", models, { ...owner, body: { models: ["parley/dev"] } }, 200);
    await call("DELETE", path, owner, 409);
    await call(
      "PUT",
      `/api/orgs/${w.orgId}/preview-profile`,
      { ...owner, body: { profileId: null } },
      200,
    );
    await call("DELETE", path, owner, 204);
  });

  it("tool sources and tool calls", async () => {
    const w = await world();
    const owner = { token: w.owner.token };
    const list = `/api/orgs/${w.orgId}/tool-sources`;
    const made = await call<{ id: string }>(
      "POST",
      list,
      {
        ...owner,
        body: {
          kind: "http",
          name: "Shop API",
          url: `${env.TEST_TOOL_HTTP_URL}/api`,
          credential: { header: "X-Api-Key", value: "secret-1" },
        },
      },
      201,
    );
    await call(
      "POST",
      list,
      { ...owner, body: { kind: "http", name: "Shop API", url: `${env.TEST_TOOL_HTTP_URL}/api` } },
      409,
    );
    await call(
      "POST",
      list,
      { ...owner, body: { kind: "mcp", name: "Bad", url: "http://10.0.0.1/mcp" } },
      400,
    );
    await call("GET", list, owner, 200);
    const path = `/api/tool-sources/${made.body.id}`;
    await call("GET", path, owner, 200);
    await call("PATCH", path, { ...owner, body: { priceMicros: 1000 } }, 200);
    await call(
      "POST",
      `${path}/import-openapi`,
      {
        ...owner,
        body: {
          document: {
            openapi: "3.0.3",
            paths: { "/orders/{id}": { get: { operationId: "getOrder" } } },
          },
        },
      },
      200,
    );
    await call("POST", `${path}/refresh`, owner, 400);
    const mcp = await call<{ id: string }>(
      "POST",
      list,
      { ...owner, body: { kind: "mcp", name: "Lab", url: `${env.TEST_TOOL_LAB_URL}/mcp` } },
      201,
    );
    await call("POST", `/api/tool-sources/${mcp.body.id}/refresh`, owner, 200);
    await call("GET", `/api/sessions/${w.sessionId}/tool-calls`, { token: w.member.token }, 200);
    await call("DELETE", path, owner, 204);
    await call("GET", path, owner, 404);
  });

  it("data exports", async () => {
    const w = await world();
    const owner = { token: w.owner.token };
    const mine = await call<{ id: string }>("POST", "/api/me/exports", owner, 202);
    await call("GET", "/api/me/exports", owner, 200);
    await finishExport(mine.body.id);
    const done = await call<{ downloadUrl: string }>(
      "GET",
      `/api/me/exports/${mine.body.id}`,
      owner,
      200,
    );
    const link = new URL(done.body.downloadUrl);
    await call("GET", `${link.pathname}${link.search}`, {}, 200);
    const orgs = `/api/orgs/${w.orgId}/exports`;
    const org = await call<{ id: string }>("POST", orgs, owner, 202);
    await call("GET", orgs, owner, 200);
    await call("GET", `${orgs}/${org.body.id}`, owner, 200);
  });

  it("erasure and API keys", async () => {
    const w = await world();
    const owner = { token: w.owner.token };
    const erasures = `/api/orgs/${w.orgId}/erasure-requests`;
    await call(
      "POST",
      erasures,
      { ...owner, body: { subject: { type: "session", id: w.sessionId }, reason: "asked" } },
      202,
    );
    await call("GET", erasures, owner, 200);
    await call("GET", `${erasures}/${w.erasureRequestId}`, owner, 200);

    const keys = `/api/orgs/${w.orgId}/api-keys`;
    const key = await call<{ id: string }>(
      "POST",
      keys,
      { ...owner, body: { name: "Server", scopes: ["usage:read"] } },
      201,
    );
    await call("GET", keys, owner, 200);
    await call("DELETE", `${keys}/${key.body.id}`, owner, 204);
  });

  it("apps, the token exchange and end users' own API", async () => {
    const w = await world();
    const owner = { token: w.owner.token };
    const created = await call<{ id: string; secret: { secret: string } }>(
      "POST",
      `/api/orgs/${w.orgId}/apps`,
      { ...owner, body: secretAppBody(w) },
      201,
    );
    const appPath = `/api/apps/${created.body.id}`;
    await call("GET", `/api/orgs/${w.orgId}/apps`, owner, 200);
    await call("GET", appPath, owner, 200);
    await call("PATCH", appPath, { ...owner, body: { showCost: true } }, 200);
    const rotated = await call<{ secret: { secret: string } }>(
      "POST",
      `${appPath}/secrets`,
      { ...owner, body: { overlapSeconds: 0 } },
      201,
    );
    const exchanged = await call<{ accessToken: string }>(
      "POST",
      "/api/embed/token",
      {
        body: { appId: created.body.id, token: await hs256Token(rotated.body.secret.secret) },
        headers: { origin: ORIGIN },
      },
      200,
    );
    await call(
      "POST",
      `${appPath}/end-user-tokens`,
      { token: w.apiKey.secret, body: { sub: "server-user", name: "Server User" } },
      201,
    );
    const endUser = { token: exchanged.body.accessToken };
    await call("GET", "/api/embed/me", endUser, 200);
    await call("GET", "/api/embed/sessions", endUser, 200);
    const session = await call<{ id: string }>(
      "POST",
      "/api/embed/sessions",
      { ...endUser, body: { title: "Help" } },
      201,
    );
    await call("GET", `/api/embed/sessions/${session.body.id}`, endUser, 200);
    await call("GET", `/api/embed/sessions/${session.body.id}/limits`, endUser, 200);
    await call("GET", `/api/embed/projects/${w.projectId}/opening`, endUser, 200);
    await call("GET", `/api/embed/sessions/${session.body.id}/tool-calls`, endUser, 200);
    await call(
      "PATCH",
      `/api/embed/sessions/${session.body.id}`,
      { ...endUser, body: { title: "Help 2" } },
      200,
    );
    await call(
      "POST",
      "/api/embed/connect-tickets",
      { ...endUser, body: { sessionId: session.body.id } },
      201,
    );
    await call("POST", `${appPath}/preview-token`, owner, 201);
    await call("GET", `${appPath}/end-users`, owner, 200);
    await call(
      "POST",
      `${appPath}/end-users/erase`,
      { ...owner, body: { externalId: "server-user" } },
      202,
    );
    // The deprecated path form after its last day (its answer before it: test/end-user-ids.test.ts).
    await call("DELETE", `${appPath}/end-users/user-1`, owner, 410, {
      END_USER_ERASE_PATH_END: "2000-01-01",
    });
    await call("DELETE", appPath, owner, 204);
  });

  it("knowledge documents, their search and the org's storage", async () => {
    const w = await world();
    const owner = { token: w.owner.token };
    const upload = {
      name: "faq.md",
      contentType: "text/markdown",
      text: "# FAQ\n\nThe ferry leaves at noon.",
    };
    const docs = `/api/projects/${w.projectId}/documents`;
    const doc = await call<{ id: string }>("POST", docs, { ...owner, body: upload }, 201);
    await call("GET", docs, owner, 200);
    await call("GET", `/api/documents/${doc.body.id}`, owner, 200);
    await call("GET", `/api/documents/${doc.body.id}/content`, owner, 200);
    await call("POST", `/api/documents/${doc.body.id}/versions`, { ...owner, body: upload }, 201);
    await indexed(w.owner.token, doc.body.id);
    const found = await call<{ items: { chunkId: string; version: number }[] }>(
      "GET",
      `/api/projects/${w.projectId}/knowledge/search?q=ferry`,
      owner,
      200,
    );
    // A member opens a cited passage (the web app's sources).
    await call(
      "GET",
      `/api/documents/${doc.body.id}/passages/${found.body.items[0]?.chunkId}?version=${found.body.items[0]?.version}`,
      owner,
      200,
    );
    // The end user of the project's app opens a cited passage (the embed's sources).
    const { accessToken } = await endUserToken(w, "reader");
    const [hit] = found.body.items;
    await call(
      "GET",
      `/api/embed/documents/${doc.body.id}/passages/${hit?.chunkId}?version=${hit?.version}`,
      { token: accessToken, headers: { origin: PAGE } },
      200,
    );
    await call("GET", `/api/orgs/${w.orgId}/billing/storage`, owner, 200);
    await call("POST", docs, { ...owner, body: { ...upload, text: "" } }, 400);
    await call("DELETE", `/api/documents/${doc.body.id}`, owner, 204);
  });

  it("drove every documented operation, or says why not", () => {
    const documented = new Set(operations.map((o) => o.key).filter((k) => k.includes(" /api/")));
    const unchecked = [...documented].filter((k) => !covered.has(k) && !(k in notDriven));
    expect(unchecked).toEqual([]);
  });
});
