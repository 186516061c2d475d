import type { DataExportKind } from "@parley/shared";
import { billingAccount } from "../billing/account.ts";
import type { AppRow } from "../db/apps.ts";
import { iso } from "../db/pagination.ts";
import { toErasureRequest } from "../erasure/file.ts";
import type { ErasureRequestRow, StepName } from "../erasure/plan.ts";
import { invitationsTo } from "../erasure/steps.ts";
import {
  API_KEY_COLUMNS,
  apiKeyItems,
  auditItems,
  EXPORT_COLUMNS,
  exportItems,
  INVITATION_COLUMNS,
  invitationItems,
  time,
} from "./items.ts";

/**
 * What an archive holds, section by section, and how each is read. Rows are read column by column
 * (never `SELECT *`), so a secret added to a table later does not reach an archive by accident:
 * no password hash, token hash, API key hash or app secret is ever selected.
 */

export interface ExportRow {
  id: string;
  kind: DataExportKind;
  subject_user_id: string;
  org_id: string | null;
  requested_by: string;
  status: "pending" | "running" | "completed" | "failed";
  progress_done: number;
  progress_total: number;
  error: string | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  expires_at: number | null;
  secret_hash: string | null;
  size_bytes: number | null;
  purged_at: number | null;
}

/** One unit of work: a whole section, or one item of a section that is a list (a session). */
export interface Unit {
  section: string;
  /** For an item: the object it reads (a session id, a project id). */
  key?: string;
  /** Framing written with the unit, so the archive is the chunks in order. */
  first: boolean;
  last: boolean;
  /** An array section with nothing in it: the unit writes `[]`. */
  empty?: boolean;
  /** The section is not the archive's first: a comma goes before it. */
  follows?: boolean;
}

const ACCOUNT_SECTIONS = [
  "profile",
  "memberships",
  "invitations",
  "sessions",
  "previewMessages",
  "usage",
  "ledger",
  "apiKeys",
  "erasureRequests",
  "audit",
  "exports",
] as const;

const ORG_SECTIONS = [
  "organization",
  "members",
  "invitations",
  "projects",
  "sessions",
  "previewChats",
  "apps",
  "endUsers",
  "apiKeys",
  "usage",
  "ledger",
  "payments",
  "erasureRequests",
  "audit",
  "exports",
] as const;

/** Sections written one item per unit (each a Durable Object's transcript). */
const ITEM_SECTIONS = new Set(["sessions", "previewMessages", "previewChats"]);

export const SECTIONS: Record<DataExportKind, readonly string[]> = {
  account: ACCOUNT_SECTIONS,
  org: ORG_SECTIONS,
};

/**
 * Which sections carry what each erasure step removes, per kind: the erasure's step list is the
 * list of stores the platform writes, so an export that covers every step covers every store. A
 * new erasure step fails to type-check here (and the completeness test) until it has a mapping.
 */
export const EXPORT_COVERAGE: Record<
  StepName,
  Record<DataExportKind, readonly string[]> | { none: string }
> = {
  agents: { account: ["sessions", "previewMessages"], org: ["sessions", "previewChats"] },
  d1: {
    account: ["profile", "memberships", "invitations", "sessions", "apiKeys"],
    org: [
      "organization",
      "members",
      "invitations",
      "projects",
      "sessions",
      "apps",
      "endUsers",
      "apiKeys",
    ],
  },
  ledger: { account: ["usage", "ledger"], org: ["usage", "ledger"] },
  audit: { account: ["audit", "erasureRequests"], org: ["audit", "erasureRequests"] },
  // Stripe's customer is an org's (its id and payments are in the org's archive); a person's
  // payment details are Stripe's own records (docs/2026-12-01-data-retention.md).
  stripe: { account: [], org: ["organization", "payments"] },
  exports: { account: ["exports"], org: ["exports"] },
  verify: { none: "a check of the other stores, not a store" },
};

const ID_LIST = "(SELECT value FROM json_each(?))";

async function all<T>(db: D1Database, sql: string, ...bindings: unknown[]): Promise<T[]> {
  const { results } = await db
    .prepare(sql)
    .bind(...bindings)
    .all<T>();
  return results;
}

const live = (alias: string) =>
  `${alias}.deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.subject_id = ${alias}.id)`;

/** The sessions an archive holds: the person's own, or all of the org's (erased ones never). */
function sessionIds(env: Env, row: ExportRow): Promise<{ id: string }[]> {
  return row.kind === "account"
    ? all(
        env.DB,
        `SELECT s.id FROM sessions s JOIN projects p ON p.id = s.project_id
         WHERE s.owner_id = ? AND ${live("s")} AND ${live("p")} ORDER BY s.id`,
        row.subject_user_id,
      )
    : all(
        env.DB,
        `SELECT s.id FROM sessions s JOIN projects p ON p.id = s.project_id
         WHERE s.org_id = ? AND ${live("s")} AND ${live("p")} ORDER BY s.id`,
        row.org_id,
      );
}

/** Projects whose shared onboarding chat the person (account) or anyone (org) wrote in. */
function chatProjectIds(env: Env, row: ExportRow): Promise<{ id: string }[]> {
  return row.kind === "account"
    ? all(
        env.DB,
        `SELECT DISTINCT a.project_id AS id FROM preview_authors a JOIN projects p ON p.id = a.project_id
         WHERE a.user_id = ? AND ${live("p")} ORDER BY a.project_id`,
        row.subject_user_id,
      )
    : all(
        env.DB,
        `SELECT DISTINCT a.project_id AS id FROM preview_authors a JOIN projects p ON p.id = a.project_id
         WHERE a.org_id = ? AND ${live("p")} ORDER BY a.project_id`,
        row.org_id,
      );
}

/** The units of an export, resolved when it starts (objects made later are not in it). */
export async function planUnits(env: Env, row: ExportRow): Promise<Unit[]> {
  const units: Unit[] = [];
  for (const section of SECTIONS[row.kind]) {
    if (!ITEM_SECTIONS.has(section)) {
      units.push({ section, first: true, last: true });
      continue;
    }
    const keys =
      section === "sessions" ? await sessionIds(env, row) : await chatProjectIds(env, row);
    if (keys.length === 0) units.push({ section, first: true, last: true, empty: true });
    for (const [i, k] of keys.entries()) {
      units.push({ section, key: k.id, first: i === 0, last: i === keys.length - 1 });
    }
  }
  return units.map((unit, i) => (unit.first && i > 0 ? { ...unit, follows: true } : unit));
}

/** The orgs whose stores hold the person's usage: theirs now and those of their sessions. */
async function personOrgIds(env: Env, userId: string): Promise<string[]> {
  const rows = await all<{ id: string }>(
    env.DB,
    `SELECT org_id AS id FROM memberships WHERE user_id = ?1
     UNION SELECT org_id AS id FROM sessions WHERE owner_id = ?1`,
    userId,
  );
  return rows.map((r) => r.id);
}

const USAGE_PAGE = 500;

async function usageOf(env: Env, orgId: string, memberId?: string) {
  const account = billingAccount(env, orgId);
  const rows = [];
  let after: { createdAt: number; requestId: string } | undefined;
  const to = Date.now() + 1;
  for (;;) {
    const page = await account.usageRows({
      from: 0,
      to,
      limit: USAGE_PAGE,
      ...(memberId ? { memberId } : {}),
      ...(after ? { after } : {}),
    });
    rows.push(...page.map((u) => ({ ...u, orgId, createdAt: iso(u.createdAt) })));
    const last = page.at(-1);
    if (page.length < USAGE_PAGE || !last) break;
    after = { createdAt: last.createdAt, requestId: last.requestId };
  }
  return rows;
}

async function ledgerOf(env: Env, orgId: string, references?: Set<string>) {
  const account = billingAccount(env, orgId);
  const rows = [];
  let before: number | null = null;
  for (;;) {
    const page = await account.entries(before, USAGE_PAGE);
    for (const e of page) {
      if (references && !(e.reference && references.has(e.reference))) continue;
      rows.push({ ...e, orgId, createdAt: iso(e.createdAt) });
    }
    const last = page.at(-1);
    if (page.length < USAGE_PAGE || !last) break;
    before = last.seq;
  }
  return rows.reverse();
}

async function sessionItem(env: Env, sessionId: string) {
  const row = await env.DB.prepare(
    `SELECT s.id, s.project_id, s.org_id, s.owner_id, s.app_id, s.title, s.created_at, s.updated_at
     FROM sessions s WHERE s.id = ? AND ${live("s")}`,
  )
    .bind(sessionId)
    .first<{
      id: string;
      project_id: string;
      org_id: string;
      owner_id: string;
      app_id: string | null;
      title: string | null;
      created_at: number;
      updated_at: number;
    }>();
  // Erased since the export started: skipped, and its object never addressed (that recreates it).
  if (!row) return null;
  const agent = env.ASSISTANT_AGENT.get(env.ASSISTANT_AGENT.idFromName(row.id));
  const messages = JSON.parse(await agent.transcriptForExport()) as unknown[];
  return {
    id: row.id,
    projectId: row.project_id,
    orgId: row.org_id,
    ownerId: row.owner_id,
    appId: row.app_id,
    title: row.title,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    messages,
  };
}

async function chatItem(env: Env, row: ExportRow, projectId: string) {
  const project = await env.DB.prepare(
    `SELECT p.id, p.org_id, p.name FROM projects p WHERE p.id = ? AND ${live("p")}`,
  )
    .bind(projectId)
    .first<{ id: string; org_id: string; name: string }>();
  if (!project) return null;
  const chat = env.ONBOARDING_AGENT.get(env.ONBOARDING_AGENT.idFromName(project.id));
  // A person gets what they wrote in the shared chat and the replies to it; the org, all of it.
  const messages = JSON.parse(
    await chat.transcriptForExport(row.kind === "account" ? row.subject_user_id : null),
  ) as unknown[];
  return { projectId: project.id, orgId: project.org_id, projectName: project.name, messages };
}

/** Reads one unit's content: a section's whole value, or one item of a list section. */
export async function readUnit(env: Env, row: ExportRow, unit: Unit): Promise<unknown> {
  const db = env.DB;
  const user = row.subject_user_id;
  const org = row.org_id ?? "";
  if (unit.key !== undefined) {
    return unit.section === "sessions" ? sessionItem(env, unit.key) : chatItem(env, row, unit.key);
  }
  if (unit.empty) return null;
  switch (`${row.kind}:${unit.section}`) {
    case "account:profile": {
      const u = await db
        .prepare("SELECT id, email, name, created_at FROM users WHERE id = ?")
        .bind(user)
        .first<{ id: string; email: string; name: string; created_at: number }>();
      return u && { id: u.id, email: u.email, name: u.name, createdAt: iso(u.created_at) };
    }
    case "account:memberships": {
      const rows = await all<{ org_id: string; name: string; role: string; created_at: number }>(
        db,
        `SELECT m.org_id, o.name, m.role, m.created_at FROM memberships m
         JOIN organizations o ON o.id = m.org_id WHERE m.user_id = ? ORDER BY m.org_id`,
        user,
      );
      return rows.map((r) => ({
        orgId: r.org_id,
        orgName: r.name,
        role: r.role,
        joinedAt: iso(r.created_at),
      }));
    }
    case "account:invitations": {
      const email = await db
        .prepare("SELECT email FROM users WHERE id = ?")
        .bind(user)
        .first<{ email: string }>();
      const ids = await invitationsTo(db, email?.email, null);
      return invitationItems(
        await all(
          db,
          `SELECT ${INVITATION_COLUMNS} FROM invitations WHERE id IN ${ID_LIST} ORDER BY id`,
          JSON.stringify(ids),
        ),
      );
    }
    case "account:usage": {
      const rows = [];
      for (const orgId of await personOrgIds(env, user))
        rows.push(...(await usageOf(env, orgId, user)));
      return rows;
    }
    case "account:ledger": {
      // The ledger's usage entries of the person's model calls (the entry's reference is the call).
      const rows = [];
      for (const orgId of await personOrgIds(env, user)) {
        const calls = new Set((await usageOf(env, orgId, user)).map((u) => u.requestId));
        if (calls.size > 0) rows.push(...(await ledgerOf(env, orgId, calls)));
      }
      return rows;
    }
    case "account:apiKeys":
      return apiKeyItems(
        await all(
          db,
          `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE created_by = ? ORDER BY id`,
          user,
        ),
      );
    case "account:erasureRequests":
      return (
        await all<ErasureRequestRow>(
          db,
          "SELECT * FROM erasure_requests WHERE requested_by = ? ORDER BY id",
          user,
        )
      ).map(toErasureRequest);
    case "account:audit":
      return auditItems(
        await all(
          db,
          `SELECT id, org_id, actor_id, action, subject_type, subject_id, data, created_at
           FROM audit_log WHERE actor_id = ?1 OR subject_id = ?1 ORDER BY id`,
          user,
        ),
      );
    case "account:exports":
      return exportItems(
        await all(
          db,
          // Not this export: it is still running, and its link is not part of what it holds.
          `SELECT ${EXPORT_COLUMNS} FROM data_exports WHERE kind = 'account' AND subject_user_id = ? AND id != ? ORDER BY id`,
          user,
          row.id,
        ),
      );
    case "org:organization": {
      const o = await db
        .prepare("SELECT id, name, stripe_customer_id, created_at FROM organizations WHERE id = ?")
        .bind(org)
        .first<{
          id: string;
          name: string;
          stripe_customer_id: string | null;
          created_at: number;
        }>();
      const account = billingAccount(env, org);
      const balance = await account.balance();
      return (
        o && {
          id: o.id,
          name: o.name,
          createdAt: iso(o.created_at),
          stripeCustomerId: o.stripe_customer_id,
          billing: balance,
        }
      );
    }
    case "org:members": {
      const rows = await all<{
        user_id: string;
        email: string;
        name: string;
        role: string;
        created_at: number;
      }>(
        db,
        `SELECT m.user_id, u.email, u.name, m.role, m.created_at FROM memberships m
         JOIN users u ON u.id = m.user_id WHERE m.org_id = ? ORDER BY m.user_id`,
        org,
      );
      return rows.map((r) => ({
        userId: r.user_id,
        email: r.email,
        name: r.name,
        role: r.role,
        joinedAt: iso(r.created_at),
      }));
    }
    case "org:invitations":
      return invitationItems(
        await all(
          db,
          `SELECT ${INVITATION_COLUMNS} FROM invitations WHERE org_id = ? ORDER BY id`,
          org,
        ),
      );
    case "org:projects": {
      const rows = await all<{
        id: string;
        name: string;
        memory: string;
        created_by: string | null;
        created_at: number;
        updated_at: number;
      }>(
        db,
        `SELECT p.id, p.name, p.memory, p.created_by, p.created_at, p.updated_at FROM projects p
         WHERE p.org_id = ? AND ${live("p")} ORDER BY p.id`,
        org,
      );
      return rows.map((r) => ({
        id: r.id,
        name: r.name,
        memory: JSON.parse(r.memory) as unknown,
        createdBy: r.created_by,
        createdAt: iso(r.created_at),
        updatedAt: iso(r.updated_at),
      }));
    }
    case "org:apps": {
      const apps = await all<Omit<AppRow, "org_id">>(
        db,
        `SELECT id, name, token_type, token_alg, token_jwk, token_jwks_url, token_issuer, token_audience,
           max_token_lifetime_seconds, end_user_daily_limit_micros, end_user_weekly_limit_micros, end_user_monthly_limit_micros,
           show_cost, created_at, updated_at, deleted_at
         FROM apps WHERE org_id = ? ORDER BY id`,
        org,
      );
      const origins = await all<{ app_id: string; origin: string }>(
        db,
        "SELECT app_id, origin FROM app_origins WHERE org_id = ?",
        org,
      );
      const projects = await all<{ app_id: string; project_id: string }>(
        db,
        "SELECT app_id, project_id FROM app_projects WHERE org_id = ?",
        org,
      );
      // Which signing secrets exist, never a secret (the sealed value is not selected).
      const secrets = await all<{
        app_id: string;
        kid: string;
        created_at: number;
        expires_at: number | null;
      }>(db, "SELECT app_id, kid, created_at, expires_at FROM app_secrets WHERE org_id = ?", org);
      return apps.map((a) => ({
        id: a.id,
        name: a.name,
        verification: {
          type: a.token_type,
          alg: a.token_alg,
          // A public key (the app stores no private member).
          jwk: a.token_jwk ? (JSON.parse(a.token_jwk) as unknown) : null,
          url: a.token_jwks_url,
          issuer: a.token_issuer,
          audience: a.token_audience,
          maxTokenLifetimeSeconds: a.max_token_lifetime_seconds,
          secrets: secrets
            .filter((s) => s.app_id === a.id)
            .map((s) => ({
              kid: s.kid,
              createdAt: iso(s.created_at),
              expiresAt: time(s.expires_at),
            })),
        },
        allowedOrigins: origins.filter((o) => o.app_id === a.id).map((o) => o.origin),
        projectIds: projects.filter((p) => p.app_id === a.id).map((p) => p.project_id),
        endUserDailyLimitMicros: a.end_user_daily_limit_micros,
        endUserWeeklyLimitMicros: a.end_user_weekly_limit_micros,
        endUserMonthlyLimitMicros: a.end_user_monthly_limit_micros,
        showCost: a.show_cost === 1,
        createdAt: iso(a.created_at),
        updatedAt: iso(a.updated_at),
        deletedAt: time(a.deleted_at),
      }));
    }
    case "org:endUsers": {
      const rows = await all<{
        id: string;
        app_id: string;
        external_id: string;
        name: string | null;
        created_at: number;
        last_seen_at: number;
      }>(
        db,
        "SELECT id, app_id, external_id, name, created_at, last_seen_at FROM end_users WHERE org_id = ? ORDER BY id",
        org,
      );
      return rows.map((r) => ({
        id: r.id,
        appId: r.app_id,
        externalId: r.external_id,
        name: r.name,
        createdAt: iso(r.created_at),
        lastSeenAt: iso(r.last_seen_at),
      }));
    }
    case "org:apiKeys":
      return apiKeyItems(
        await all(db, `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE org_id = ? ORDER BY id`, org),
      );
    case "org:usage":
      return usageOf(env, org);
    case "org:ledger":
      return ledgerOf(env, org);
    case "org:payments": {
      const rows = await all<{
        payment_intent_id: string;
        checkout_session_id: string | null;
        source: string;
        amount_micros: number;
        created_at: number;
      }>(
        db,
        "SELECT payment_intent_id, checkout_session_id, source, amount_micros, created_at FROM stripe_payments WHERE org_id = ? ORDER BY created_at",
        org,
      );
      return rows.map((r) => ({
        paymentIntentId: r.payment_intent_id,
        checkoutSessionId: r.checkout_session_id,
        source: r.source,
        amountMicros: r.amount_micros,
        createdAt: iso(r.created_at),
      }));
    }
    case "org:erasureRequests":
      return (
        await all<ErasureRequestRow>(
          db,
          "SELECT * FROM erasure_requests WHERE org_id = ? ORDER BY id",
          org,
        )
      ).map(toErasureRequest);
    case "org:audit":
      return auditItems(
        await all(
          db,
          `SELECT id, org_id, actor_id, action, subject_type, subject_id, data, created_at
           FROM audit_log WHERE org_id = ? ORDER BY id`,
          org,
        ),
      );
    case "org:exports":
      return exportItems(
        await all(
          db,
          `SELECT ${EXPORT_COLUMNS} FROM data_exports WHERE kind = 'org' AND org_id = ? AND id != ? ORDER BY id`,
          org,
          row.id,
        ),
      );
  }
  throw new Error(`no reader for section ${unit.section} of a ${row.kind} export`);
}
