import {
  createExecutionContext,
  env,
  runDurableObjectAlarm,
  SELF,
  waitOnExecutionContext,
} from "cloudflare:test";
import { API_KEY_SCOPES, type ApiKeyScope, newId, type Role } from "@parley/shared";
import { app } from "../src/app.ts";
import { issueApiKey } from "../src/auth/api-keys.ts";
import { signAccessToken } from "../src/auth/tokens.ts";
import { config } from "../src/env.ts";
import { exportJob, exportRow } from "../src/exports/file.ts";
import { lastMailId, linkSecret, nextMail } from "./mail.ts";

export const BASE = "https://parley.test";

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

export interface ApiOptions {
  token?: string;
  body?: unknown;
  /** Sent as is, for malformed-input tests. */
  rawBody?: string;
  headers?: Record<string, string>;
}

/** A random client address (10.0.0.0/8), as Cloudflare would send in `CF-Connecting-IP`. */
export const randomClientAddress = (): string =>
  `10.${[...crypto.getRandomValues(new Uint8Array(3))].join(".")}`;

/**
 * The simulated rate limiters count, like Cloudflare's, in windows aligned to the clock (a minute,
 * or `periodMs`): a test that must see one window whole and ran across a boundary would see its
 * count start again. Waits, if need be, until `needMs` are left in the current window.
 */
export async function inOneWindow(needMs: number, periodMs = 60_000): Promise<void> {
  const left = periodMs - (Date.now() % periodMs);
  if (left < needMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

/**
 * Calls the real Worker (routing, middleware, D1) the way a client does.
 *
 * Sign-ups are rate-limited per client address (`CF-Connecting-IP`), and the simulated limiter's
 * counters are shared by every test file of the run: without the header all of them would be one
 * client and the suite would trip the limit. So a sign-up that names no address comes from a new
 * one, as different people's do; the tests of the limit send `cf-connecting-ip` themselves.
 */
export async function api<T = Record<string, unknown>>(
  method: string,
  path: string,
  options: ApiOptions = {},
): Promise<ApiResponse<T>> {
  const headers = new Headers(options.headers);
  if (path.startsWith("/api/auth/signup") && !headers.has("cf-connecting-ip")) {
    headers.set("cf-connecting-ip", randomClientAddress());
  }
  if (options.token !== undefined) headers.set("authorization", `Bearer ${options.token}`);
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  const response = await SELF.fetch(`${BASE}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed as T, headers: response.headers };
}

/**
 * `api()` through the app itself with some vars replaced (an injectable configuration: a date a
 * form ends on, say), so a test can stand on either side of a configured moment without waiting.
 */
export async function apiWithVars<T = Record<string, unknown>>(
  vars: Record<string, string>,
  method: string,
  path: string,
  options: ApiOptions = {},
): Promise<ApiResponse<T>> {
  const headers = new Headers(options.headers);
  if (options.token !== undefined) headers.set("authorization", `Bearer ${options.token}`);
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers.set("content-type", "application/json");
  }
  const ctx = createExecutionContext();
  const response = await app.fetch(
    new Request(`${BASE}${path}`, { method, headers, body }),
    { ...env, ...vars },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed as T, headers: response.headers };
}

export const errorCode = (response: ApiResponse): unknown =>
  (response.body as { error?: { code?: string } } | null)?.error?.code;

let counter = 0;
export const uniqueEmail = (label = "user") =>
  `${label}-${Date.now().toString(36)}-${(counter++).toString(36)}@example.test`;

/**
 * An access token for a user made straight in D1: a sign-in session (family) of its own that no
 * refresh token belongs to, so only a logout-style revocation of that family (or a role change)
 * ends it, as for a real one.
 */
export async function tokenFor(
  userId: string,
  options: { familyId?: string; version?: number } = {},
): Promise<string> {
  const subject = {
    userId,
    familyId: options.familyId ?? crypto.randomUUID(),
    version: options.version ?? 0,
  };
  return (await signAccessToken(config(env), subject)).token;
}

export interface Person {
  id: string;
  email: string;
  token: string;
}

/** Inserts a user straight into D1 (no password hashing) and mints an access token for them. */
export async function person(label: string): Promise<Person> {
  const id = newId("user");
  const email = uniqueEmail(label);
  // Verified, as every account made before mail (migration 0021) and every signed-up one that
  // used its link: these people stand for accounts in use.
  await env.DB.prepare(
    "INSERT INTO users (id, email, name, password_hash, created_at, email_verified_at) VALUES (?, ?, ?, 'none', ?, ?)",
  )
    .bind(id, email, label, Date.now(), Date.now())
    .run();
  return { id, email, token: await tokenFor(id) };
}

export async function addMembership(orgId: string, userId: string, role: Role): Promise<void> {
  await env.DB.prepare(
    "INSERT INTO memberships (org_id, user_id, role, created_at) VALUES (?, ?, ?, ?)",
  )
    .bind(orgId, userId, role, Date.now())
    .run();
}

export async function org(owner: Person, name = "Org"): Promise<string> {
  const id = newId("org");
  await env.DB.prepare("INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?)")
    .bind(id, name, Date.now())
    .run();
  await addMembership(id, owner.id, "owner");
  return id;
}

export async function project(orgId: string, createdBy: string, memory = {}): Promise<string> {
  const id = newId("project");
  const now = Date.now();
  await env.DB.prepare(
    "INSERT INTO projects (id, org_id, name, memory, created_by, created_at, updated_at) VALUES (?, ?, 'P', ?, ?, ?, ?)",
  )
    .bind(id, orgId, JSON.stringify(memory), createdBy, now, now)
    .run();
  return id;
}

export async function session(projectId: string, orgId: string, ownerId: string): Promise<string> {
  const id = newId("session");
  const now = Date.now();
  await env.DB.prepare(
    "INSERT INTO sessions (id, project_id, org_id, owner_id, title, created_at, updated_at) VALUES (?, ?, ?, ?, 'S', ?, ?)",
  )
    .bind(id, projectId, orgId, ownerId, now, now)
    .run();
  return id;
}

export interface TestApiKey {
  id: string;
  /** The whole key, as its creator was shown it: send it as the bearer. */
  secret: string;
  prefix: string;
}

/** An API key of `orgId` made straight in D1, stored as `POST .../api-keys` stores one. */
export async function apiKeyFor(
  orgId: string,
  scopes: readonly ApiKeyScope[] = API_KEY_SCOPES,
  options: { createdBy?: string | null; expiresAt?: number; revokedAt?: number } = {},
): Promise<TestApiKey> {
  const id = newId("apiKey");
  const issued = await issueApiKey();
  await env.DB.prepare(
    `INSERT INTO api_keys (id, org_id, name, prefix, secret_hash, scopes, created_by, created_at, expires_at, revoked_at)
     VALUES (?, ?, 'Test key', ?, ?, ?, ?, ?, ?, ?)`,
  )
    .bind(
      id,
      orgId,
      issued.prefix,
      issued.hash,
      JSON.stringify(scopes),
      options.createdBy ?? null,
      Date.now(),
      options.expiresAt ?? null,
      options.revokedAt ?? null,
    )
    .run();
  return { id, secret: issued.key, prefix: issued.prefix };
}

/**
 * An app of the org straight in D1: verified by `secret` (with no secret yet: rotate one through
 * the API), allowed on https://shop.example, offering the project. test/apps.ts makes real ones.
 */
export async function embedApp(orgId: string, projectId: string): Promise<string> {
  const id = newId("app");
  const now = Date.now();
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO apps (id, org_id, name, token_type, token_alg, token_issuer, token_audience,
         max_token_lifetime_seconds, created_at, updated_at)
       VALUES (?, ?, 'Shop', 'secret', 'HS256', 'https://shop.example', 'parley', 600, ?, ?)`,
    ).bind(id, orgId, now, now),
    env.DB.prepare(
      "INSERT INTO app_origins (app_id, org_id, origin) VALUES (?, ?, 'https://shop.example')",
    ).bind(id, orgId),
    env.DB.prepare("INSERT INTO app_projects (app_id, org_id, project_id) VALUES (?, ?, ?)").bind(
      id,
      orgId,
      projectId,
    ),
  ]);
  return id;
}

/**
 * Two organizations: A with an owner, an admin and two members (one owns a session), B with its own
 * owner ("outsider"), project and session, and a newcomer who belongs to neither; A also has an API
 * key with every scope. Each call builds a fresh one, so tests that mutate do not interfere.
 */
export async function world() {
  const [owner, admin, member, otherMember, outsider, newcomer] = await Promise.all([
    person("owner"),
    person("admin"),
    person("member"),
    person("member2"),
    person("outsider"),
    person("newcomer"),
  ]);
  const orgId = await org(owner, "Acme");
  await addMembership(orgId, admin.id, "admin");
  await addMembership(orgId, member.id, "member");
  await addMembership(orgId, otherMember.id, "member");
  const projectId = await project(orgId, owner.id, { goal: "ship" });
  const sessionId = await session(projectId, orgId, member.id);
  const otherOrgId = await org(outsider, "Other");
  const otherProjectId = await project(otherOrgId, outsider.id);
  const otherSessionId = await session(otherProjectId, otherOrgId, outsider.id);
  const appId = await embedApp(orgId, projectId);
  // A completed erasure request filed by the owner (subject shown by its hash only).
  const erasureRequestId = newId("erasure");
  await env.DB.prepare(
    `INSERT INTO erasure_requests (id, org_id, requested_by, subject_type, subject_hash, legal_basis, status, steps, created_at, updated_at)
     VALUES (?, ?, ?, 'session', 'anon_x', 'GDPR Art. 17', 'completed', '[]', ?, ?)`,
  )
    .bind(erasureRequestId, orgId, owner.id, Date.now(), Date.now())
    .run();
  // A server API key of org A with every scope, made by its owner.
  const apiKey = await apiKeyFor(orgId, API_KEY_SCOPES, { createdBy: owner.id });
  return {
    owner,
    admin,
    member,
    otherMember,
    outsider,
    newcomer,
    orgId,
    projectId,
    sessionId,
    otherOrgId,
    otherProjectId,
    otherSessionId,
    erasureRequestId,
    appId,
    apiKey,
  };
}
export type World = Awaited<ReturnType<typeof world>>;

/** Row counts of every directory table: "nothing changed" means this snapshot is equal before and after. */
export async function snapshot(options: { mail?: boolean } = {}): Promise<Record<string, number>> {
  const all = [
    "users",
    "organizations",
    "memberships",
    "projects",
    "sessions",
    "refresh_tokens",
    "audit_log",
    "invitations",
    "apps",
    "app_origins",
    "app_projects",
    "app_secrets",
    "end_users",
    "api_keys",
    "org_models",
    "assistant_profiles",
    "assistant_profile_versions",
    // Mail (docs/2026-12-06-mail.md): a refused call issues no link and queues no mail.
    "account_tokens",
    "mail_outbox",
    "knowledge_documents",
    "knowledge_versions",
    "tool_sources",
    "tool_calls",
  ];
  // Without them (`mail: false`) for a call that is taken and mails, but changes nothing else.
  const tables =
    options.mail === false
      ? all.filter((t) => !t.startsWith("mail_") && t !== "account_tokens")
      : all;
  const results = await env.DB.batch(
    tables.map((t) =>
      env.DB.prepare(`SELECT COUNT(*) AS n, COALESCE(MAX(rowid), 0) AS m FROM ${t}`),
    ),
  );
  return Object.fromEntries(
    tables.map((t, i) => {
      const row = results[i]?.results[0] as { n: number; m: number };
      return [t, row.n * 1e9 + row.m];
    }),
  );
}

/** A person signed up through the API, as a real user is: their first org, token and cookie. */
export interface SignedUp {
  email: string;
  password: string;
  userId: string;
  accessToken: string;
  /** The refresh cookie's value (`parley_refresh`). */
  refreshCookie: string;
  /** The org that came with the sign-up. */
  orgId: string;
}

/**
 * Signs a person up through the API and, unless `verified: false`, verifies their address the way
 * they would: the verification mail is read from the development mailbox and its link used
 * (`POST /api/auth/verify-email`), which also posts the sign-up grant. No back door: the same
 * path a person takes.
 */
export async function signUp(
  label: string,
  options: {
    email?: string;
    password?: string;
    orgName?: string;
    name?: string;
    verified?: boolean;
  } = {},
): Promise<SignedUp> {
  const email = options.email ?? `${label}-${crypto.randomUUID()}@example.test`;
  const password = options.password ?? "a long enough password";
  // An address used before (an erased account's) has older mail: this sign-up's link comes after.
  const after = options.email ? await lastMailId(email) : "0";
  const res = await api<{ accessToken: string; user: { id: string } }>("POST", "/api/auth/signup", {
    body: {
      email,
      password,
      name: options.name ?? label,
      ...(options.orgName ? { orgName: options.orgName } : {}),
    },
  });
  if (res.status !== 201)
    throw new Error(`signup answered ${res.status}: ${JSON.stringify(res.body)}`);
  if (options.verified !== false) await verifyByMail(email, after);
  const me = await api<{ orgs: { id: string }[] }>("GET", "/api/me", {
    token: res.body.accessToken,
  });
  return {
    email,
    password,
    userId: res.body.user.id,
    accessToken: res.body.accessToken,
    refreshCookie: /parley_refresh=([^;]+)/.exec(res.headers.get("set-cookie") ?? "")?.[1] ?? "",
    orgId: me.body.orgs[0]?.id ?? "",
  };
}

/** Uses the newest verification link mailed to `email`, as its owner would. */
export async function verifyByMail(email: string, after = "0"): Promise<void> {
  const mail = await nextMail(email, "verify_email", { after });
  const res = await api("POST", "/api/auth/verify-email", {
    body: { token: linkSecret(mail, "/verify-email") },
  });
  if (res.status !== 200) {
    throw new Error(`verify-email answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
}

/** Drives an export's alarm until the job is done (its alarms also fire by themselves). */
export async function finishExport(id: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const row = await exportRow(env, id);
    if (row?.status === "completed" || row?.status === "failed") return;
    await runDurableObjectAlarm(exportJob(env, id));
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`export ${id} did not finish`);
}

/** What a profile version says, for `profileIn` (test/profiles.test.ts makes real ones). */
export interface TestProfileContent {
  name?: string;
  instructions?: string;
  model?: string;
  tools?: string[];
}

/**
 * An assistant profile of `orgId` straight in D1, written by `authorId`, at `versions` versions
 * (each a copy of the content named `<name> v<n>`); `id` for a deterministic one.
 */
export async function profileIn(
  orgId: string,
  authorId: string,
  options: TestProfileContent & { versions?: number; id?: string } = {},
): Promise<string> {
  const id = options.id ?? newId("profile");
  const versions = options.versions ?? 1;
  const now = Date.now();
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO assistant_profiles (id, org_id, current_version, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
    ).bind(id, orgId, versions, now, now),
    ...Array.from({ length: versions }, (_, i) =>
      env.DB.prepare(
        `INSERT INTO assistant_profile_versions (profile_id, version, org_id, name, instructions,
           model, temperature, top_p, max_output_tokens, welcome, suggestions, tools, author_id,
           restored_from, created_at)
         VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, '[]', ?, ?, NULL, ?)`,
      ).bind(
        id,
        i + 1,
        orgId,
        `${options.name ?? "Profile"} v${i + 1}`,
        options.instructions ?? "",
        options.model ?? "parley/dev",
        JSON.stringify(options.tools ?? []),
        authorId,
        now + i,
      ),
    ),
  ]);
  return id;
}
