import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../src/app.ts";
import {
  api,
  apiWithVars,
  errorCode,
  profileIn,
  randomClientAddress,
  snapshot,
  uniqueEmail,
  type World,
  world,
} from "./helpers.ts";

/**
 * The authorization matrix: every route of the app, called by each kind of caller, with the status
 * each must get. A route missing here fails the inventory test below, so a new route cannot ship
 * without a decision about who may call it. `apiKey` is a server API key of the org with every
 * scope (issue 15): 401 on every route that needs a member, unless the row says otherwise.
 */
type Caller = "anonymous" | "member" | "admin" | "owner" | "otherOwner" | "apiKey";
type Expect = Record<Caller, number>;

interface Row {
  route: string;
  /** `vars`: the Worker's vars replaced for this row (test/helpers.ts `apiWithVars`). */
  request: (w: World) => {
    path: string;
    body?: unknown;
    headers?: Record<string, string>;
    vars?: Record<string, string>;
  };
  expect: Expect;
  /** Rows the request needs beyond the world's, written before the snapshot. */
  prepare?: (w: World) => Promise<void>;
}

/** A profile of org A at two versions, its id derived from the world's (2026-12-06). */
const profileOf = (w: World) => `apf_${w.orgId.slice(4)}`;
const withProfile = async (w: World) => {
  await profileIn(w.orgId, w.owner.id, { id: profileOf(w), versions: 2 });
};

/** A tool source of org A (2026-12-06, issue 30), its id derived from the world's. */
const sourceOf = (w: World) => `tsrc_${w.orgId.slice(4)}`;
const withSource = (kind: "mcp" | "http") => async (w: World) => {
  const url = kind === "mcp" ? `${env.TEST_TOOL_LAB_URL}/mcp` : `${env.TEST_TOOL_HTTP_URL}/api`;
  await env.DB.prepare(
    `INSERT INTO tool_sources (id, org_id, kind, name, url, created_by, created_at, updated_at)
     VALUES (?, ?, ?, 'Matrix', ?, ?, ?, ?)`,
  )
    .bind(sourceOf(w), w.orgId, kind, url, w.owner.id, Date.now(), Date.now())
    .run();
};

/** Finished data exports of the world's owner (no archive, no link), with ids derived from it. */
const accountExportOf = (w: World) => `exp_${w.owner.id.slice(4)}`;
const orgExportOf = (w: World) => `exp_${w.orgId.slice(4)}`;
async function ownerExports(w: World): Promise<void> {
  await env.DB.batch(
    [
      [accountExportOf(w), "account", null],
      [orgExportOf(w), "org", w.orgId],
    ].map(([id, kind, org]) =>
      env.DB.prepare(
        `INSERT INTO data_exports (id, kind, subject_user_id, org_id, requested_by, status, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 'completed', ?, ?)`,
      ).bind(id, kind, w.owner.id, org, w.owner.id, Date.now(), Date.now()),
    ),
  );
}

/** A document of the world's project, in D1 and in its KnowledgeBase, its id derived from the world's. */
const documentOf = (w: World) => `doc_${w.orgId.slice(4)}`;
async function withDocument(w: World): Promise<void> {
  const now = Date.now();
  const id = documentOf(w);
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO knowledge_documents (id, org_id, project_id, name, content_type, version, bytes, created_by, created_at, updated_at)
       VALUES (?, ?, ?, 'faq.md', 'text/markdown', 1, 20, ?, ?, ?)`,
    ).bind(id, w.orgId, w.projectId, w.owner.id, now, now),
    env.DB.prepare(
      `INSERT INTO knowledge_versions (document_id, version, org_id, project_id, content_type, bytes, text_chars, sha256, created_by, created_at)
       VALUES (?, 1, ?, ?, 'text/markdown', 20, 20, 'x', ?, ?)`,
    ).bind(id, w.orgId, w.projectId, w.owner.id, now),
  ]);
  const text = "# FAQ\n\nThe ferry leaves.";
  await env.KNOWLEDGE_BASE.get(env.KNOWLEDGE_BASE.idFromName(w.projectId)).stage({
    orgId: w.orgId,
    projectId: w.projectId,
    documentId: id,
    version: 1,
    name: "faq.md",
    text,
    chunks: [{ heading: "FAQ", start: 0, end: text.length, text }],
    memberId: w.owner.id,
  });
}
const documentUpload = { name: "faq.md", contentType: "text/markdown", text: "# FAQ\n\nHello." };

const everyone = (status: number): Expect => ({
  anonymous: status,
  member: status,
  admin: status,
  owner: status,
  otherOwner: status,
  apiKey: status,
});
// A member's access token: an API key is no sign-in.
const signedIn = (status: number): Expect => ({ ...everyone(status), anonymous: 401, apiKey: 401 });
const orgMembers = (status: number): Expect => ({ ...signedIn(status), otherOwner: 404 });
const orgAdmins = (status: number): Expect => ({ ...orgMembers(status), member: 403 });

const matrix: Row[] = [
  { route: "GET /api/health", request: () => ({ path: "/api/health" }), expect: everyone(200) },
  // The API's own description is public, like the contract it states.
  {
    route: "GET /api/openapi.json",
    request: () => ({ path: "/api/openapi.json" }),
    expect: everyone(200),
  },
  {
    route: "GET /.well-known/jwks.json",
    request: () => ({ path: "/.well-known/jwks.json" }),
    expect: everyone(200),
  },
  {
    route: "POST /api/auth/signup",
    request: () => ({
      path: "/api/auth/signup",
      body: { email: uniqueEmail("matrix"), password: "a long enough password", name: "M" },
    }),
    expect: everyone(201),
  },
  {
    route: "POST /api/auth/login",
    request: () => ({
      path: "/api/auth/login",
      body: { email: uniqueEmail("nobody"), password: "whatever-it-is" },
    }),
    expect: everyone(401),
  },
  // Refresh reads only the cookie: an access token does not stand in for it.
  {
    route: "POST /api/auth/refresh",
    request: () => ({ path: "/api/auth/refresh" }),
    expect: everyone(401),
  },
  {
    route: "POST /api/auth/logout",
    request: () => ({ path: "/api/auth/logout" }),
    // A member's token ends its own sign-in; an API key is no sign-in, and is refused.
    expect: { ...everyone(204), apiKey: 401 },
  },
  // Mail (docs/2026-12-06-mail.md): a reset is asked for by anyone, answered alike for every
  // address; a link is its own proof (here one never issued: gone for everyone).
  {
    route: "POST /api/auth/password-reset",
    request: () => ({
      path: "/api/auth/password-reset",
      body: { email: uniqueEmail("matrix-reset") },
      headers: { "cf-connecting-ip": randomClientAddress() },
    }),
    expect: everyone(202),
  },
  {
    route: "POST /api/auth/password-reset/confirm",
    request: () => ({
      path: "/api/auth/password-reset/confirm",
      body: { token: `rst_${"A".repeat(43)}`, password: "a long enough password" },
    }),
    expect: everyone(410),
  },
  {
    route: "POST /api/auth/verify-email",
    request: () => ({ path: "/api/auth/verify-email", body: { token: `vfy_${"A".repeat(43)}` } }),
    expect: everyone(410),
  },
  { route: "GET /api/me", request: () => ({ path: "/api/me" }), expect: signedIn(200) },
  // The world's people are verified already, and have no password to give.
  {
    route: "POST /api/me/email-verification",
    request: () => ({ path: "/api/me/email-verification" }),
    expect: signedIn(409),
  },
  {
    route: "POST /api/me/email",
    request: () => ({
      path: "/api/me/email",
      body: { newEmail: uniqueEmail("matrix-new"), password: "a guess" },
    }),
    expect: signedIn(403),
  },
  {
    route: "GET /api/me/notifications",
    request: () => ({ path: "/api/me/notifications" }),
    expect: signedIn(200),
  },
  // Billing mail is for owners: an admin or member of the org is refused, another org's owner
  // finds no org.
  {
    route: "PATCH /api/me/notifications/:orgId",
    request: (w) => ({ path: `/api/me/notifications/${w.orgId}`, body: { receipts: true } }),
    expect: { ...orgAdmins(200), admin: 403 },
  },
  { route: "GET /api/orgs", request: () => ({ path: "/api/orgs" }), expect: signedIn(200) },
  {
    route: "POST /api/orgs",
    request: () => ({ path: "/api/orgs", body: { name: "New" } }),
    expect: signedIn(201),
  },
  {
    route: "GET /api/orgs/:orgId",
    request: (w) => ({ path: `/api/orgs/${w.orgId}` }),
    expect: orgMembers(200),
  },
  {
    route: "GET /api/orgs/:orgId/members",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/members` }),
    expect: orgMembers(200),
  },
  // Who left the org, for the erasure picker: owners and admins, never another org's.
  {
    route: "GET /api/orgs/:orgId/former-members",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/former-members` }),
    expect: orgAdmins(200),
  },
  {
    route: "POST /api/orgs/:orgId/members",
    request: (w) => ({
      path: `/api/orgs/${w.orgId}/members`,
      body: { email: w.newcomer.email, role: "member" },
    }),
    expect: orgAdmins(201),
  },
  {
    route: "PATCH /api/orgs/:orgId/members/:userId",
    request: (w) => ({
      path: `/api/orgs/${w.orgId}/members/${w.otherMember.id}`,
      body: { role: "admin" },
    }),
    expect: orgAdmins(200),
  },
  {
    route: "DELETE /api/orgs/:orgId/members/:userId",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/members/${w.otherMember.id}` }),
    expect: orgAdmins(204),
  },
  {
    route: "POST /api/orgs/:orgId/invitations",
    request: (w) => ({
      path: `/api/orgs/${w.orgId}/invitations`,
      body: { email: uniqueEmail("invitee"), role: "member" },
    }),
    expect: orgAdmins(201),
  },
  {
    route: "GET /api/orgs/:orgId/invitations",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/invitations` }),
    expect: orgAdmins(200),
  },
  {
    route: "DELETE /api/orgs/:orgId/invitations/:invitationId",
    request: (w) => ({
      path: `/api/orgs/${w.orgId}/invitations/inv_00000000000000000000000000`,
    }),
    expect: orgAdmins(404),
  },
  // The link's secret is the credential: a wrong one is 404 to anyone (invitations.test.ts has
  // the real ones).
  {
    route: "GET /api/auth/invitations/:token",
    // Deprecated path forms, while they still answer (their end: test/invitations.test.ts).
    request: () => ({
      path: `/api/auth/invitations/inv_${"x".repeat(43)}`,
      vars: { INVITATION_PATH_FORMS_END: "2999-12-31" },
    }),
    expect: everyone(404),
  },
  {
    route: "POST /api/auth/invitations/preview",
    request: () => ({
      path: "/api/auth/invitations/preview",
      body: { token: `inv_${"x".repeat(43)}` },
    }),
    expect: everyone(404),
  },
  {
    route: "POST /api/invitations/accept",
    request: () => ({ path: "/api/invitations/accept", body: { token: `inv_${"x".repeat(43)}` } }),
    expect: signedIn(404),
  },
  {
    route: "POST /api/invitations/:token/accept",
    request: () => ({
      path: `/api/invitations/inv_${"x".repeat(43)}/accept`,
      vars: { INVITATION_PATH_FORMS_END: "2999-12-31" },
    }),
    expect: signedIn(404),
  },
  {
    route: "GET /api/orgs/:orgId/projects",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/projects` }),
    expect: orgMembers(200),
  },
  {
    route: "POST /api/orgs/:orgId/projects",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/projects`, body: { name: "Launch" } }),
    expect: orgMembers(201),
  },
  {
    route: "GET /api/projects/:projectId",
    request: (w) => ({ path: `/api/projects/${w.projectId}` }),
    expect: orgMembers(200),
  },
  {
    route: "PATCH /api/projects/:projectId",
    request: (w) => ({ path: `/api/projects/${w.projectId}`, body: { memory: { tone: "dry" } } }),
    expect: orgMembers(200),
  },
  {
    route: "DELETE /api/projects/:projectId",
    request: (w) => ({ path: `/api/projects/${w.projectId}` }),
    expect: orgAdmins(204),
  },
  {
    route: "GET /api/projects/:projectId/sessions",
    request: (w) => ({ path: `/api/projects/${w.projectId}/sessions` }),
    expect: orgMembers(200),
  },
  {
    route: "POST /api/projects/:projectId/sessions",
    request: (w) => ({ path: `/api/projects/${w.projectId}/sessions`, body: { title: "Plan" } }),
    expect: orgMembers(201),
  },
  // The session belongs to the member; admins and owners of the org may also read and delete it.
  {
    route: "GET /api/sessions/:sessionId",
    request: (w) => ({ path: `/api/sessions/${w.sessionId}` }),
    expect: orgMembers(200),
  },
  // Only the session's owner renames it; admins who may read it may not (403).
  {
    route: "PATCH /api/sessions/:sessionId",
    request: (w) => ({ path: `/api/sessions/${w.sessionId}`, body: { title: "Renamed" } }),
    expect: { anonymous: 401, member: 200, admin: 403, owner: 403, otherOwner: 404, apiKey: 401 },
  },
  // The limits on the caller's own calls in the session's project (the chat's warning).
  {
    route: "GET /api/sessions/:sessionId/limits",
    request: (w) => ({ path: `/api/sessions/${w.sessionId}/limits` }),
    expect: orgMembers(200),
  },
  {
    route: "DELETE /api/sessions/:sessionId",
    request: (w) => ({ path: `/api/sessions/${w.sessionId}` }),
    expect: orgMembers(204),
  },
  // Members list their own sessions; admins and owners every member's (see tenancy tests).
  // An API key with sessions:read lists them all, as an admin (test/api-keys.test.ts).
  {
    route: "GET /api/orgs/:orgId/sessions",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/sessions` }),
    expect: { ...orgMembers(200), apiKey: 200 },
  },
  {
    route: "GET /api/orgs/:orgId/billing",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/billing` }),
    expect: orgMembers(200),
  },
  {
    route: "PATCH /api/orgs/:orgId/billing/settings",
    request: (w) => ({
      path: `/api/orgs/${w.orgId}/billing/settings`,
      body: { memberDailyLimitMicros: 2_000_000 },
    }),
    expect: orgAdmins(200),
  },
  {
    route: "GET /api/orgs/:orgId/billing/ledger",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/billing/ledger` }),
    expect: orgAdmins(200),
  },
  // Members may read usage: their own only (see billing tests). API keys with usage:read too.
  {
    route: "GET /api/orgs/:orgId/billing/usage",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/billing/usage?groupBy=model` }),
    expect: { ...orgMembers(200), apiKey: 200 },
  },
  {
    route: "GET /api/orgs/:orgId/billing/usage.csv",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/billing/usage.csv` }),
    expect: { ...orgMembers(200), apiKey: 200 },
  },
  // Members may read activity: their own calls only (see billing tests).
  {
    route: "GET /api/orgs/:orgId/billing/activity",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/billing/activity` }),
    expect: orgMembers(200),
  },
  {
    route: "GET /api/orgs/:orgId/billing/alerts",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/billing/alerts` }),
    expect: orgAdmins(200),
  },
  {
    route: "GET /api/orgs/:orgId/billing/payments",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/billing/payments` }),
    expect: orgAdmins(200),
  },
  // Limits (issue 16.4): admins list and set members' and projects' limits; everyone their own.
  {
    route: "GET /api/orgs/:orgId/billing/limits",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/billing/limits` }),
    expect: orgAdmins(200),
  },
  {
    route: "GET /api/orgs/:orgId/billing/limits/me",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/billing/limits/me` }),
    expect: orgMembers(200),
  },
  {
    route: "PUT /api/orgs/:orgId/billing/limits/me",
    request: (w) => ({
      path: `/api/orgs/${w.orgId}/billing/limits/me`,
      body: { period: "week", amountMicros: 5_000_000 },
    }),
    expect: orgMembers(200),
  },
  {
    route: "PUT /api/orgs/:orgId/billing/limits/members/:userId",
    request: (w) => ({
      path: `/api/orgs/${w.orgId}/billing/limits/members/${w.member.id}`,
      body: { period: "day", amountMicros: 5_000_000 },
    }),
    expect: orgAdmins(200),
  },
  {
    route: "PUT /api/orgs/:orgId/billing/limits/projects/:projectId",
    request: (w) => ({
      path: `/api/orgs/${w.orgId}/billing/limits/projects/${w.projectId}`,
      body: { period: "month", amountMicros: 5_000_000 },
    }),
    expect: orgAdmins(200),
  },
  {
    route: "POST /api/orgs/:orgId/billing/checkout",
    request: (w) => ({
      path: `/api/orgs/${w.orgId}/billing/checkout`,
      body: { amountMicros: 10_000_000 },
    }),
    expect: orgAdmins(201),
  },
  {
    route: "POST /api/orgs/:orgId/billing/portal",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/billing/portal` }),
    expect: orgAdmins(201),
  },
  // Automatic top-up (issue 16.1): owners and admins only, like every payment setting.
  {
    route: "GET /api/orgs/:orgId/billing/auto-top-up",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/billing/auto-top-up` }),
    expect: orgAdmins(200),
  },
  {
    route: "PUT /api/orgs/:orgId/billing/auto-top-up",
    request: (w) => ({
      path: `/api/orgs/${w.orgId}/billing/auto-top-up`,
      body: {
        enabled: false,
        thresholdMicros: 5_000_000,
        amountMicros: 20_000_000,
        monthlyCapMicros: 100_000_000,
      },
    }),
    expect: orgAdmins(200),
  },
  {
    route: "POST /api/orgs/:orgId/billing/auto-top-up/card",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/billing/auto-top-up/card` }),
    expect: orgAdmins(201),
  },
  {
    route: "DELETE /api/orgs/:orgId/billing/auto-top-up/card",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/billing/auto-top-up/card` }),
    expect: orgAdmins(200),
  },
  // Public, authenticated by Stripe's signature instead of a token: unsigned is invalid for everyone.
  {
    route: "POST /api/webhooks/stripe",
    request: () => ({
      path: "/api/webhooks/stripe",
      body: { id: "evt_forged", type: "checkout.session.completed" },
    }),
    expect: everyone(400),
  },
  // The platform operator (routes/operator.ts): its own secret is the only way in, so every
  // caller of this matrix, owners and admins included, is 401 (free credits are not theirs to
  // give). The operator's own cases are in "the operator principal" below and test/grants.test.ts.
  {
    route: "POST /api/operator/orgs/:orgId/grants",
    request: (w) => ({
      path: `/api/operator/orgs/${w.orgId}/grants`,
      body: { amountMicros: 1_000_000, idempotencyKey: "matrix" },
    }),
    expect: everyone(401),
  },
  {
    route: "PUT /api/operator/orgs/:orgId/allowance",
    request: (w) => ({
      path: `/api/operator/orgs/${w.orgId}/allowance`,
      body: { amountMicros: 1_000_000, billingDay: 1 },
    }),
    expect: everyone(401),
  },
  // The model catalogue (2026-12-06): its operator side, like the grants, is the operator's only.
  {
    route: "GET /api/operator/models",
    request: () => ({ path: "/api/operator/models" }),
    expect: everyone(401),
  },
  {
    route: "PUT /api/operator/models",
    request: () => ({
      path: "/api/operator/models",
      body: {
        id: "matrix/model",
        provider: { type: "openrouter" },
        displayName: "Matrix",
        contextWindow: 1000,
        maxOutputTokens: 100,
        capabilities: { tools: false, reasoning: false },
        pricing: { prompt: "0.000001", completion: "0.000002" },
      },
    }),
    expect: everyone(401),
  },
  {
    route: "POST /api/operator/models/retire",
    request: () => ({ path: "/api/operator/models/retire", body: { id: "parley/dev-large" } }),
    expect: everyone(401),
  },
  // Anyone signed in reads the catalogue; members read their org's allowed models (the chat's
  // picker) and profiles; owners and admins change them (test/profiles.test.ts).
  { route: "GET /api/models", request: () => ({ path: "/api/models" }), expect: signedIn(200) },
  {
    route: "GET /api/orgs/:orgId/models",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/models` }),
    expect: orgMembers(200),
  },
  {
    route: "PUT /api/orgs/:orgId/models",
    request: (w) => ({
      path: `/api/orgs/${w.orgId}/models`,
      body: { models: ["parley/dev", "parley/dev-fast"] },
    }),
    expect: orgAdmins(200),
  },
  {
    route: "GET /api/orgs/:orgId/preview-profile",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/preview-profile` }),
    expect: orgMembers(200),
  },
  {
    route: "PUT /api/orgs/:orgId/preview-profile",
    prepare: withProfile,
    request: (w) => ({
      path: `/api/orgs/${w.orgId}/preview-profile`,
      body: { profileId: profileOf(w) },
    }),
    expect: orgAdmins(200),
  },
  {
    route: "GET /api/orgs/:orgId/profiles",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/profiles` }),
    expect: orgMembers(200),
  },
  {
    route: "POST /api/orgs/:orgId/profiles",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/profiles`, body: { name: "Support" } }),
    expect: orgAdmins(201),
  },
  {
    route: "GET /api/profiles/:profileId",
    prepare: withProfile,
    request: (w) => ({ path: `/api/profiles/${profileOf(w)}` }),
    expect: orgMembers(200),
  },
  {
    route: "PATCH /api/profiles/:profileId",
    prepare: withProfile,
    request: (w) => ({ path: `/api/profiles/${profileOf(w)}`, body: { name: "Renamed" } }),
    expect: orgAdmins(200),
  },
  {
    route: "DELETE /api/profiles/:profileId",
    prepare: withProfile,
    request: (w) => ({ path: `/api/profiles/${profileOf(w)}` }),
    expect: orgAdmins(204),
  },
  {
    route: "GET /api/profiles/:profileId/versions",
    prepare: withProfile,
    request: (w) => ({ path: `/api/profiles/${profileOf(w)}/versions` }),
    expect: orgMembers(200),
  },
  {
    route: "GET /api/profiles/:profileId/versions/:version",
    prepare: withProfile,
    request: (w) => ({ path: `/api/profiles/${profileOf(w)}/versions/1` }),
    expect: orgMembers(200),
  },
  {
    route: "POST /api/profiles/:profileId/rollback",
    prepare: withProfile,
    request: (w) => ({ path: `/api/profiles/${profileOf(w)}/rollback`, body: { version: 1 } }),
    expect: orgAdmins(200),
  },
  {
    route: "GET /api/profiles/:profileId/prompt-preview",
    prepare: withProfile,
    request: (w) => ({
      path: `/api/profiles/${profileOf(w)}/prompt-preview?projectId=${w.projectId}`,
    }),
    expect: orgMembers(200),
  },
  // Tool sources (issue 30): members read them, owners and admins change them; a session's tool
  // calls are its owner's and the org's admins' (test/tool-sources.test.ts).
  {
    route: "GET /api/orgs/:orgId/tool-sources",
    prepare: withSource("http"),
    request: (w) => ({ path: `/api/orgs/${w.orgId}/tool-sources` }),
    expect: orgMembers(200),
  },
  {
    route: "POST /api/orgs/:orgId/tool-sources",
    request: (w) => ({
      path: `/api/orgs/${w.orgId}/tool-sources`,
      body: { kind: "http", name: "Shop API", url: `${env.TEST_TOOL_HTTP_URL}/api` },
    }),
    expect: orgAdmins(201),
  },
  {
    route: "GET /api/tool-sources/:id",
    prepare: withSource("http"),
    request: (w) => ({ path: `/api/tool-sources/${sourceOf(w)}` }),
    expect: orgMembers(200),
  },
  {
    route: "PATCH /api/tool-sources/:id",
    prepare: withSource("http"),
    request: (w) => ({ path: `/api/tool-sources/${sourceOf(w)}`, body: { name: "Renamed" } }),
    expect: orgAdmins(200),
  },
  {
    route: "DELETE /api/tool-sources/:id",
    prepare: withSource("http"),
    request: (w) => ({ path: `/api/tool-sources/${sourceOf(w)}` }),
    expect: orgAdmins(204),
  },
  {
    route: "POST /api/tool-sources/:id/refresh",
    prepare: withSource("mcp"),
    request: (w) => ({ path: `/api/tool-sources/${sourceOf(w)}/refresh` }),
    expect: orgAdmins(200),
  },
  {
    route: "POST /api/tool-sources/:id/import-openapi",
    prepare: withSource("http"),
    request: (w) => ({
      path: `/api/tool-sources/${sourceOf(w)}/import-openapi`,
      body: { document: { openapi: "3.1.0", paths: {} } },
    }),
    expect: orgAdmins(200),
  },
  {
    route: "GET /api/sessions/:sessionId/tool-calls",
    request: (w) => ({ path: `/api/sessions/${w.sessionId}/tool-calls` }),
    expect: orgMembers(200),
  },
  // What Stripe did that credits did not follow (issue 28): for the operator only, as any money
  // of the platform's is; an org's owner reading it would see other orgs' payments.
  {
    route: "GET /api/operator/stripe/unrecognized",
    request: () => ({ path: "/api/operator/stripe/unrecognized" }),
    expect: everyone(401),
  },
  {
    route: "GET /api/operator/stripe/excess",
    request: () => ({ path: "/api/operator/stripe/excess" }),
    expect: everyone(401),
  },
  // Erasure: owners and admins erase members, projects and sessions (a member only their own
  // sessions: see test/erasure.test.ts); everyone reads the requests they may see.
  {
    route: "POST /api/orgs/:orgId/erasure-requests",
    request: (w) => ({
      path: `/api/orgs/${w.orgId}/erasure-requests`,
      body: { subject: { type: "project", id: w.projectId }, reason: "matrix" },
    }),
    expect: orgAdmins(202),
  },
  {
    route: "GET /api/orgs/:orgId/erasure-requests",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/erasure-requests` }),
    expect: orgMembers(200),
  },
  {
    route: "GET /api/orgs/:orgId/erasure-requests/:requestId",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/erasure-requests/${w.erasureRequestId}` }),
    // A member sees only the requests they filed; this one the owner filed.
    expect: { ...orgAdmins(200), member: 404 },
  },
  // Data exports (2026-12-02): anyone their own account; owners their org's.
  {
    route: "POST /api/me/exports",
    request: () => ({ path: "/api/me/exports" }),
    expect: signedIn(202),
  },
  {
    route: "GET /api/me/exports",
    request: () => ({ path: "/api/me/exports" }),
    expect: signedIn(200),
  },
  {
    route: "GET /api/me/exports/:exportId",
    prepare: ownerExports,
    request: (w) => ({ path: `/api/me/exports/${accountExportOf(w)}` }),
    // The owner's own; anyone else's is a missing one.
    expect: { ...signedIn(404), owner: 200 },
  },
  {
    route: "POST /api/orgs/:orgId/exports",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/exports` }),
    expect: { ...orgAdmins(202), admin: 403 },
  },
  {
    route: "GET /api/orgs/:orgId/exports",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/exports` }),
    expect: { ...orgAdmins(200), admin: 403 },
  },
  {
    route: "GET /api/orgs/:orgId/exports/:exportId",
    prepare: ownerExports,
    request: (w) => ({ path: `/api/orgs/${w.orgId}/exports/${orgExportOf(w)}` }),
    expect: { ...orgAdmins(200), admin: 403 },
  },
  // The link is the capability (no sign-in); a wrong key is a missing export, whoever sends it.
  {
    route: "GET /api/exports/:exportId/download",
    prepare: ownerExports,
    request: (w) => ({ path: `/api/exports/${orgExportOf(w)}/download?key=${"k".repeat(43)}` }),
    expect: everyone(404),
  },
  // Server API keys (issue 15): owners and admins manage them, with an access token only.
  {
    route: "GET /api/orgs/:orgId/api-keys",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/api-keys` }),
    expect: orgAdmins(200),
  },
  {
    route: "POST /api/orgs/:orgId/api-keys",
    request: (w) => ({
      path: `/api/orgs/${w.orgId}/api-keys`,
      body: { name: "Billing export", scopes: ["usage:read"] },
    }),
    expect: orgAdmins(201),
  },
  {
    route: "DELETE /api/orgs/:orgId/api-keys/:keyId",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/api-keys/${w.apiKey.id}` }),
    expect: orgAdmins(204),
  },
  // Self-erasure: anyone signed in, for their own account only (the member's org has another owner).
  // The owner is the only owner of an org with other members: refused until ownership is handed over.
  // Changing one's own account: anyone signed in, their own only (account.test.ts walks it).
  {
    route: "PATCH /api/me",
    request: () => ({ path: "/api/me", body: { name: "Renamed" } }),
    expect: signedIn(200),
  },
  // The matrix's people have no password: the current one given is wrong for all of them.
  {
    route: "POST /api/me/password",
    request: () => ({
      path: "/api/me/password",
      body: { currentPassword: "a guess", newPassword: "another long password" },
    }),
    expect: signedIn(403),
  },
  {
    route: "DELETE /api/me",
    request: () => ({ path: "/api/me", body: { confirm: true } }),
    expect: { ...signedIn(202), owner: 409 },
  },
  // Apps (embeds): owners and admins only; they hold how the org's end users are trusted.
  {
    route: "GET /api/orgs/:orgId/apps",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/apps` }),
    expect: orgAdmins(200),
  },
  {
    route: "POST /api/orgs/:orgId/apps",
    request: (w) => ({
      path: `/api/orgs/${w.orgId}/apps`,
      body: {
        name: "Shop",
        allowedOrigins: ["https://shop.example"],
        projectIds: [w.projectId],
        verification: { type: "secret", issuer: "https://shop.example", audience: "parley" },
      },
    }),
    expect: orgAdmins(201),
  },
  {
    route: "GET /api/apps/:appId",
    request: (w) => ({ path: `/api/apps/${w.appId}` }),
    expect: orgAdmins(200),
  },
  {
    route: "PATCH /api/apps/:appId",
    request: (w) => ({ path: `/api/apps/${w.appId}`, body: { name: "Renamed" } }),
    expect: orgAdmins(200),
  },
  {
    route: "DELETE /api/apps/:appId",
    request: (w) => ({ path: `/api/apps/${w.appId}` }),
    expect: orgAdmins(204),
  },
  {
    route: "POST /api/apps/:appId/secrets",
    request: (w) => ({ path: `/api/apps/${w.appId}/secrets`, body: {} }),
    expect: orgAdmins(201),
  },
  // The developers' area (test/app-end-user-list.test.ts): who uses the app, and the preview.
  {
    route: "GET /api/apps/:appId/end-users",
    request: (w) => ({ path: `/api/apps/${w.appId}/end-users` }),
    expect: orgAdmins(200),
  },
  {
    route: "POST /api/apps/:appId/preview-token",
    request: (w) => ({ path: `/api/apps/${w.appId}/preview-token` }),
    expect: orgAdmins(201),
  },
  // Public, authenticated by a token the app verifies (test/end-user-tokens.test.ts); a Parley
  // sign-in is neither needed nor enough: this one is no valid tenant token, for anyone.
  {
    route: "POST /api/embed/token",
    request: (w) => ({ path: "/api/embed/token", body: { appId: w.appId, token: "not.a.jwt" } }),
    expect: everyone(401),
  },
  // The end-user routes' CORS preflight: only for an origin a live app lists (none here: not a
  // browser).
  {
    route: "OPTIONS /api/embed/*",
    request: () => ({ path: "/api/embed/token" }),
    expect: everyone(403),
  },
  // An end user's own surface (test/end-user-sessions.test.ts): only an end-user access token;
  // a member's token and an API key are 401 like no token.
  { route: "GET /api/embed/me", request: () => ({ path: "/api/embed/me" }), expect: everyone(401) },
  {
    route: "GET /api/embed/sessions",
    request: () => ({ path: "/api/embed/sessions" }),
    expect: everyone(401),
  },
  {
    route: "POST /api/embed/sessions",
    request: () => ({ path: "/api/embed/sessions", body: {} }),
    expect: everyone(401),
  },
  {
    route: "GET /api/embed/projects/:projectId/opening",
    request: (w) => ({ path: `/api/embed/projects/${w.projectId}/opening` }),
    expect: everyone(401),
  },
  {
    route: "GET /api/embed/sessions/:sessionId",
    request: (w) => ({ path: `/api/embed/sessions/${w.sessionId}` }),
    expect: everyone(401),
  },
  {
    route: "GET /api/embed/sessions/:sessionId/limits",
    request: (w) => ({ path: `/api/embed/sessions/${w.sessionId}/limits` }),
    expect: everyone(401),
  },
  {
    route: "GET /api/embed/sessions/:sessionId/tool-calls",
    request: (w) => ({ path: `/api/embed/sessions/${w.sessionId}/tool-calls` }),
    expect: everyone(401),
  },
  {
    route: "PATCH /api/embed/sessions/:sessionId",
    request: (w) => ({ path: `/api/embed/sessions/${w.sessionId}`, body: { title: "x" } }),
    expect: everyone(401),
  },
  {
    route: "POST /api/embed/connect-tickets",
    request: (w) => ({ path: "/api/embed/connect-tickets", body: { sessionId: w.sessionId } }),
    expect: everyone(401),
  },
  // A cited passage for an end user (test/knowledge-turn.test.ts: their app's projects only).
  {
    route: "GET /api/embed/documents/:documentId/passages/:chunkId",
    request: () => ({ path: "/api/embed/documents/doc_x/passages/c1" }),
    expect: everyone(401),
  },
  // A tenant's server mints end-user tokens with its key (scope end_users:token) only.
  {
    route: "POST /api/apps/:appId/end-user-tokens",
    request: (w) => ({ path: `/api/apps/${w.appId}/end-user-tokens`, body: { sub: "matrix" } }),
    expect: { ...everyone(401), apiKey: 201 },
  },
  // The tenant erases an end user: its key (end_users:erase) or an admin; one never seen is 404.
  // Named in the body; the path form is deprecated (docs/2026-12-06-end-user-ids.md).
  {
    route: "POST /api/apps/:appId/end-users/erase",
    request: (w) => ({
      path: `/api/apps/${w.appId}/end-users/erase`,
      body: { externalId: "nobody" },
    }),
    expect: { ...orgAdmins(404), apiKey: 404 },
  },
  {
    route: "DELETE /api/apps/:appId/end-users/:externalId",
    request: (w) => ({
      path: `/api/apps/${w.appId}/end-users/nobody`,
      vars: { END_USER_ERASE_PATH_END: "2999-12-31" },
    }),
    expect: { ...orgAdmins(404), apiKey: 404 },
  },
  // A connect ticket for the project's onboarding chat: any member of its org (the session row of
  // the assistant is covered by test/adversarial.test.ts, where only the owner gets one).
  {
    route: "POST /api/connect-tickets",
    request: (w) => ({
      path: "/api/connect-tickets",
      body: { agent: "onboarding-agent", name: w.projectId },
    }),
    expect: orgMembers(201),
  },
  // Knowledge (2026-12-06): members read a project's documents, owners and admins write them.
  {
    route: "GET /api/projects/:projectId/documents",
    request: (w) => ({ path: `/api/projects/${w.projectId}/documents` }),
    expect: orgMembers(200),
  },
  {
    route: "POST /api/projects/:projectId/documents",
    request: (w) => ({ path: `/api/projects/${w.projectId}/documents`, body: documentUpload }),
    expect: orgAdmins(201),
  },
  {
    route: "GET /api/projects/:projectId/knowledge/search",
    request: (w) => ({ path: `/api/projects/${w.projectId}/knowledge/search?q=ferry` }),
    expect: orgMembers(200),
  },
  {
    route: "GET /api/documents/:documentId",
    request: (w) => ({ path: `/api/documents/${documentOf(w)}` }),
    prepare: withDocument,
    expect: orgMembers(200),
  },
  {
    route: "POST /api/documents/:documentId/versions",
    request: (w) => ({ path: `/api/documents/${documentOf(w)}/versions`, body: documentUpload }),
    prepare: withDocument,
    expect: orgAdmins(201),
  },
  {
    route: "GET /api/documents/:documentId/content",
    request: (w) => ({ path: `/api/documents/${documentOf(w)}/content` }),
    prepare: withDocument,
    expect: orgMembers(200),
  },
  {
    route: "GET /api/documents/:documentId/passages/:chunkId",
    // The staged passage is the first row of the world's fresh project index.
    request: (w) => ({ path: `/api/documents/${documentOf(w)}/passages/c1?version=1` }),
    prepare: withDocument,
    expect: orgMembers(200),
  },
  {
    route: "DELETE /api/documents/:documentId",
    request: (w) => ({ path: `/api/documents/${documentOf(w)}` }),
    prepare: withDocument,
    expect: orgAdmins(204),
  },
  {
    route: "GET /api/orgs/:orgId/billing/storage",
    request: (w) => ({ path: `/api/orgs/${w.orgId}/billing/storage` }),
    expect: orgMembers(200),
  },
  // The chat agents: every method, WebSocket upgrades included, is authorized in the Worker first.
  // (test/onboarding.test.ts covers the upgrade itself; this row reads the transcript over HTTP.)
  {
    route: "ALL /agents/*",
    request: (w) => ({ path: `/agents/onboarding-agent/${w.projectId}/get-messages` }),
    expect: orgMembers(200),
  },
];

const tokenOf = (w: World, caller: Caller): string | undefined =>
  caller === "anonymous"
    ? undefined
    : caller === "apiKey"
      ? w.apiKey.secret
      : { member: w.member, admin: w.admin, owner: w.owner, otherOwner: w.outsider }[caller].token;

describe("route inventory", () => {
  it("has a matrix row for every route of the app, and no row for a route that does not exist", () => {
    const routes = new Set(
      // `ALL` entries are middleware, except the agents route, which is a handler for every method.
      app.routes
        .filter((r) => r.method !== "ALL" || r.path.startsWith("/agents"))
        .map((r) => `${r.method} ${r.path}`),
    );
    const rows = new Set(matrix.map((row) => row.route));
    expect([...routes].filter((r) => !rows.has(r))).toEqual([]);
    expect([...rows].filter((r) => !routes.has(r))).toEqual([]);
  });
});

describe("the operator principal", () => {
  const secret = (env as { OPERATOR_SECRET?: string }).OPERATOR_SECRET ?? "";
  it("the operator's secret, and only it, reaches the operator routes: any org, unknown is 404", async () => {
    const w = await world();
    const headers = { authorization: `Bearer ${secret}` };
    const grant = { amountMicros: 1_000_000, idempotencyKey: "matrix-operator" };
    const ok = await api("POST", `/api/operator/orgs/${w.otherOrgId}/grants`, {
      headers,
      body: grant,
    });
    expect(ok.status).toBe(200);
    const allowance = await api("PUT", `/api/operator/orgs/${w.orgId}/allowance`, {
      headers,
      body: { amountMicros: 0, billingDay: 1 },
    });
    expect(allowance.status).toBe(200);
    const before = await snapshot();
    const missing = await api("POST", "/api/operator/orgs/org_missing/grants", {
      headers,
      body: grant,
    });
    expect(missing.status).toBe(404);
    expect(errorCode(missing)).toBe("not_found");
    expect(await snapshot()).toEqual(before);
    for (const list of ["unrecognized", "excess"]) {
      const path = `/api/operator/stripe/${list}`;
      expect((await api("GET", path, { headers })).status, path).toBe(200);
      const wrong = await api("GET", path, { headers: { authorization: "Bearer not-it" } });
      expect(wrong.status, path).toBe(401);
      const owner = await api("GET", path, { token: w.owner.token });
      expect(owner.status, path).toBe(401);
    }
  });
});

describe("authorization matrix", () => {
  const callers: Caller[] = ["anonymous", "member", "admin", "owner", "otherOwner", "apiKey"];
  const cells = matrix.flatMap((row) => callers.map((caller) => [row.route, caller, row] as const));

  it.each(cells)(
    "%s as %s",
    async (route, caller, row) => {
      const w = await world();
      const method = route.startsWith("ALL ") ? "GET" : (route.split(" ")[0] ?? "GET");
      await row.prepare?.(w);
      const { path, body, headers, vars } = row.request(w);
      const before = await snapshot();
      const options = { token: tokenOf(w, caller), body, headers };
      const res = vars
        ? await apiWithVars(vars, method, path, options)
        : await api(method, path, options);
      expect(res.status, JSON.stringify(res.body)).toBe(row.expect[caller]);
      if (res.status >= 400) {
        // A refused call changes nothing, and says why with a code.
        expect(errorCode(res)).toBeTypeOf("string");
        expect(await snapshot()).toEqual(before);
      }
      // Self-erasure runs its job within the call, scanning every D1 table twice: seconds on a
      // loaded machine, so a cell gets more than the default 5 s.
    },
    20_000,
  );

  it("a member who does not own a session cannot see or delete it (404, like a foreign one)", async () => {
    const w = await world();
    for (const method of ["GET", "DELETE"]) {
      const res = await api(method, `/api/sessions/${w.sessionId}`, { token: w.otherMember.token });
      expect(res.status).toBe(404);
    }
  });

  it("a foreign object answers exactly like a missing one", async () => {
    const w = await world();
    const foreign = await api("GET", `/api/projects/${w.otherProjectId}`, {
      token: w.member.token,
    });
    const missing = await api("GET", "/api/projects/prj_00000000000000000000000000", {
      token: w.member.token,
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    const foreignOrg = await api("GET", `/api/orgs/${w.otherOrgId}/members`, {
      token: w.owner.token,
    });
    const missingOrg = await api("GET", "/api/orgs/org_00000000000000000000000000/members", {
      token: w.owner.token,
    });
    expect(foreignOrg.body).toEqual(missingOrg.body);
  });
});
