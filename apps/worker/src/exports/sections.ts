import type { DataExportKind } from "@parley/shared";
import { iso } from "../db/pagination.ts";
import { invitationsTo } from "../erasure/directory-step.ts";
import { toErasureRequest } from "../erasure/file.ts";
import type { ErasureRequestRow, StepName } from "../erasure/plan.ts";
import { documentIds, documentItem } from "../knowledge/export.ts";
import { authoredVersions } from "./assistant-sections.ts";
import {
  API_KEY_COLUMNS,
  apiKeyItems,
  auditItems,
  EXPORT_COLUMNS,
  exportItems,
  INVITATION_COLUMNS,
  invitationItems,
} from "./items.ts";
import { accountMail } from "./mail-section.ts";
import { readOrgSection } from "./org-sections.ts";
import { all, ID_LIST, ledgerOf, live, usageOf } from "./read.ts";
import { readToolSection, TOOL_SECTIONS } from "./tool-sections.ts";
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
  "mail",
  "profileVersions",
  "documents",
  "toolCalls",
  "erasureRequests",
  "audit",
  "exports",
] as const;

const ORG_SECTIONS = [
  "organization",
  "members",
  "invitations",
  "projects",
  "profiles",
  "documents",
  "sessions",
  "previewChats",
  "apps",
  "endUsers",
  "apiKeys",
  "mail",
  "toolSources",
  "toolCalls",
  "usage",
  "ledger",
  "payments",
  "autoTopUp",
  "erasureRequests",
  "audit",
  "exports",
] as const;

/** Sections written one item per unit (each a Durable Object's transcript). */
const ITEM_SECTIONS = new Set(["sessions", "previewMessages", "previewChats", "documents"]);

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
    // A member's erasure pseudonymizes the author of the profile versions they wrote (2026-12-06);
    // an org's erases its profiles with it.
    account: [
      "profile",
      "memberships",
      "invitations",
      "sessions",
      "apiKeys",
      "mail",
      "profileVersions",
    ],
    org: [
      "organization",
      "members",
      "invitations",
      "projects",
      "profiles",
      "sessions",
      "apps",
      "endUsers",
      "apiKeys",
      "mail",
    ],
  },
  ledger: { account: ["usage", "ledger"], org: ["usage", "ledger", "autoTopUp"] },
  audit: { account: ["audit", "erasureRequests"], org: ["audit", "erasureRequests"] },
  // Stripe's customer is an org's (its id and payments are in the org's archive); a person's
  // payment details are Stripe's own records (docs/2026-12-01-data-retention.md).
  stripe: { account: [], org: ["organization", "payments"] },
  exports: { account: ["exports"], org: ["exports"] },
  // The documents a person uploaded (account) or the org's (org), with their text (2026-12-06).
  knowledge: { account: ["documents"], org: ["documents"] },
  // A person's tool calls, an org's sources and calls (2026-12-06, issue 30).
  tools: { account: ["toolCalls"], org: ["toolSources", "toolCalls"] },
  verify: { none: "a check of the other stores, not a store" },
};

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
      section === "sessions"
        ? await sessionIds(env, row)
        : section === "documents"
          ? await documentIds(env, row)
          : await chatProjectIds(env, row);
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

async function sessionItem(env: Env, sessionId: string) {
  const row = await env.DB.prepare(
    `SELECT s.id, s.project_id, s.org_id, s.owner_id, s.app_id, s.title, s.model, s.created_at,
       s.updated_at
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
      model: string | null;
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
    model: row.model,
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
  if (unit.key !== undefined) {
    if (unit.section === "documents") return documentItem(env, unit.key);
    return unit.section === "sessions" ? sessionItem(env, unit.key) : chatItem(env, row, unit.key);
  }
  if (unit.empty) return null;
  if (TOOL_SECTIONS.has(unit.section)) return readToolSection(env, row, unit.section);
  if (row.kind === "org") return readOrgSection(env, row, unit.section);
  switch (`${row.kind}:${unit.section}`) {
    case "account:profile": {
      const u = await db
        .prepare("SELECT id, email, name, created_at, email_verified_at FROM users WHERE id = ?")
        .bind(user)
        .first<{
          id: string;
          email: string;
          name: string;
          created_at: number;
          email_verified_at: number | null;
        }>();
      return (
        u && {
          id: u.id,
          email: u.email,
          name: u.name,
          createdAt: iso(u.created_at),
          emailVerifiedAt: u.email_verified_at === null ? null : iso(u.email_verified_at),
        }
      );
    }
    case "account:memberships": {
      const rows = await all<{
        org_id: string;
        name: string;
        role: string;
        created_at: number;
        mail_receipts: number;
        mail_limit_alerts: number;
      }>(
        db,
        `SELECT m.org_id, o.name, m.role, m.created_at, m.mail_receipts, m.mail_limit_alerts
         FROM memberships m JOIN organizations o ON o.id = m.org_id WHERE m.user_id = ? ORDER BY m.org_id`,
        user,
      );
      return rows.map((r) => ({
        orgId: r.org_id,
        orgName: r.name,
        role: r.role,
        joinedAt: iso(r.created_at),
        mail: { receipts: r.mail_receipts === 1, limitAlerts: r.mail_limit_alerts === 1 },
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
    case "account:mail":
      return accountMail(db, user);
    case "account:profileVersions":
      return authoredVersions(db, user);
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
  }
  throw new Error(`no reader for section ${unit.section} of a ${row.kind} export`);
}
