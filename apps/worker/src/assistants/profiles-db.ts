import { AppError, type AssistantProfile, type ProfileVersion, type Role } from "@parley/shared";
import { notFound, requireRole } from "../auth/access.ts";
import type { Labels } from "../billing/labels.ts";
import { iso } from "../db/pagination.ts";
import type { OrgAccess } from "../http/context.ts";

/**
 * Assistant profiles in D1 (migrations/0019_assistants.sql): a profile row that points at its
 * current version, and the immutable versions. SQL lives here; the routes validate and shape.
 */

/** What one version says. */
export interface ProfileContent {
  name: string;
  instructions: string;
  model: string;
  temperature: number | null;
  topP: number | null;
  maxOutputTokens: number | null;
  welcome: string | null;
  suggestions: string[];
  tools: string[];
  /** Retrieval from the project's documents before a turn's first model call (2026-12-06). */
  knowledgeRetrieval: boolean;
}

export interface VersionRow {
  profile_id: string;
  version: number;
  org_id: string;
  name: string;
  instructions: string;
  model: string;
  temperature: number | null;
  top_p: number | null;
  max_output_tokens: number | null;
  welcome: string | null;
  suggestions: string;
  tools: string;
  knowledge_retrieval: number;
  author_id: string | null;
  restored_from: number | null;
  created_at: number;
}

/** A profile with its current version. */
export interface ProfileRow extends VersionRow {
  profile_created_at: number;
}

export const VERSION_COLUMNS = `v.profile_id, v.version, v.org_id, v.name, v.instructions, v.model,
  v.temperature, v.top_p, v.max_output_tokens, v.welcome, v.suggestions, v.tools, v.knowledge_retrieval, v.author_id,
  v.restored_from, v.created_at`;

const PROFILE_COLUMNS = `${VERSION_COLUMNS}, p.created_at AS profile_created_at`;
const PROFILE_FROM = `FROM assistant_profiles p
  JOIN assistant_profile_versions v ON v.profile_id = p.id AND v.version = p.current_version`;

/** `SELECT ${PROFILE_SELECT} WHERE ...`: profiles `p` joined to their current version `v`. */
export const PROFILE_SELECT = `${PROFILE_COLUMNS} ${PROFILE_FROM}`;

export function contentOf(row: VersionRow): ProfileContent {
  return {
    name: row.name,
    instructions: row.instructions,
    model: row.model,
    temperature: row.temperature,
    topP: row.top_p,
    maxOutputTokens: row.max_output_tokens,
    welcome: row.welcome,
    suggestions: JSON.parse(row.suggestions) as string[],
    tools: JSON.parse(row.tools) as string[],
    knowledgeRetrieval: row.knowledge_retrieval === 1,
  };
}

/** Where a profile runs. */
export interface ProfileUse {
  projects: string[];
  previewProjects: string[];
  apps: string[];
  orgPreview: boolean;
}

const noUse = (): ProfileUse => ({
  projects: [],
  previewProjects: [],
  apps: [],
  orgPreview: false,
});

/** Where the profile runs, from what `profileUses` read (nowhere when it is not there). */
export const useOf = (uses: Map<string, ProfileUse>, id: string): ProfileUse =>
  uses.get(id) ?? noUse();

/** Live uses of a profile: in one place so the listing, the 409 and the delete agree. */
const USES = `SELECT 'project' AS kind, id, default_profile_id AS profile_id FROM projects
    WHERE default_profile_id IN (SELECT value FROM json_each(?1)) AND deleted_at IS NULL
  UNION ALL SELECT 'preview', id, preview_profile_id FROM projects
    WHERE preview_profile_id IN (SELECT value FROM json_each(?1)) AND deleted_at IS NULL
  UNION ALL SELECT 'app', id, profile_id FROM apps
    WHERE profile_id IN (SELECT value FROM json_each(?1)) AND deleted_at IS NULL
  UNION ALL SELECT 'org', id, preview_profile_id FROM organizations
    WHERE preview_profile_id IN (SELECT value FROM json_each(?1))`;

/** Where each of `ids` runs, in one query whatever their number. */
export async function profileUses(
  db: D1Database,
  ids: readonly string[],
): Promise<Map<string, ProfileUse>> {
  const uses = new Map<string, ProfileUse>(ids.map((id) => [id, noUse()]));
  if (ids.length === 0) return uses;
  const { results } = await db
    .prepare(`${USES} ORDER BY 1, 2`)
    .bind(JSON.stringify(ids))
    .all<{ kind: string; id: string; profile_id: string }>();
  for (const row of results) {
    const use = uses.get(row.profile_id);
    if (!use) continue;
    if (row.kind === "project") use.projects.push(row.id);
    else if (row.kind === "preview") use.previewProjects.push(row.id);
    else if (row.kind === "app") use.apps.push(row.id);
    else use.orgPreview = true;
  }
  return uses;
}

/** SQL true when the profile bound to `?1` runs nowhere (for a delete that must not break a chat). */
export const UNUSED = `NOT EXISTS (SELECT 1 FROM (${USES}))`;

/** Runs as an onboarding preview somewhere (its model must then be a free-preview one). */
export const isPreview = (use: ProfileUse) => use.previewProjects.length > 0 || use.orgPreview;

export const toProfileVersion = (row: VersionRow, labels: Labels): ProfileVersion => ({
  profileId: row.profile_id,
  version: row.version,
  ...contentOf(row),
  authorId: row.author_id,
  authorLabel: labels.member(row.author_id),
  createdAt: iso(row.created_at),
  restoredFrom: row.restored_from,
});

export const toProfile = (row: ProfileRow, use: ProfileUse, labels: Labels): AssistantProfile => ({
  id: row.profile_id,
  orgId: row.org_id,
  version: row.version,
  ...contentOf(row),
  createdAt: iso(row.profile_created_at),
  updatedAt: iso(row.created_at),
  updatedBy: row.author_id,
  updatedByLabel: labels.member(row.author_id),
  usedBy: use,
});

/**
 * The profile and the caller's role in its org, in one query: a missing profile and another org's
 * read alike (`not_found`). `needed` is the role the action needs (403 below it).
 */
export async function profileAccess(
  db: D1Database,
  userId: string,
  profileId: string,
  needed: Role = "member",
): Promise<{ profile: ProfileRow; access: OrgAccess }> {
  const row = await db
    .prepare(
      `SELECT ${PROFILE_COLUMNS}, m.role AS role ${PROFILE_FROM}
       JOIN memberships m ON m.org_id = p.org_id AND m.user_id = ?1
       WHERE p.id = ?2`,
    )
    .bind(userId, profileId)
    .first<ProfileRow & { role: Role }>();
  if (!row) throw notFound("Profile");
  const access: OrgAccess = { orgId: row.org_id, role: row.role };
  requireRole(access, needed);
  return { profile: row, access };
}

/** One version of a profile (already authorized), or `not_found`. */
export async function versionRow(
  db: D1Database,
  profileId: string,
  version: number,
): Promise<VersionRow> {
  const row = await db
    .prepare(
      `SELECT ${VERSION_COLUMNS} FROM assistant_profile_versions v
       WHERE v.profile_id = ? AND v.version = ?`,
    )
    .bind(profileId, version)
    .first<VersionRow>();
  if (!row) throw new AppError("not_found", "Profile version not found");
  return row;
}

const contentBindings = (content: ProfileContent) => [
  content.name,
  content.instructions,
  content.model,
  content.temperature,
  content.topP,
  content.maxOutputTokens,
  content.welcome,
  JSON.stringify(content.suggestions),
  JSON.stringify(content.tools),
  content.knowledgeRetrieval ? 1 : 0,
];

/** The statements that create a profile at version 1. */
export function createStatements(
  db: D1Database,
  input: { id: string; orgId: string; authorId: string; now: number; content: ProfileContent },
): D1PreparedStatement[] {
  return [
    db
      .prepare(
        `INSERT INTO assistant_profiles (id, org_id, current_version, created_at, updated_at)
         VALUES (?, ?, 1, ?, ?)`,
      )
      .bind(input.id, input.orgId, input.now, input.now),
    db
      .prepare(
        `INSERT INTO assistant_profile_versions (profile_id, version, org_id, name, instructions,
           model, temperature, top_p, max_output_tokens, welcome, suggestions, tools,
           knowledge_retrieval, author_id, restored_from, created_at)
         VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)`,
      )
      .bind(input.id, input.orgId, ...contentBindings(input.content), input.authorId, input.now),
  ];
}

/**
 * The statements that write version `base + 1`, only while `base` is still current: run in one
 * batch, a concurrent edit makes the insert write nothing (the caller answers 409), never a
 * second version with the same number or a pointer to a version that does not exist.
 */
export function nextVersionStatements(
  db: D1Database,
  input: {
    profileId: string;
    base: number;
    authorId: string;
    now: number;
    content: ProfileContent;
    restoredFrom: number | null;
  },
): D1PreparedStatement[] {
  return [
    db
      .prepare(
        `INSERT INTO assistant_profile_versions (profile_id, version, org_id, name, instructions,
           model, temperature, top_p, max_output_tokens, welcome, suggestions, tools,
           knowledge_retrieval, author_id, restored_from, created_at)
         SELECT id, current_version + 1, org_id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
         FROM assistant_profiles WHERE id = ? AND current_version = ?`,
      )
      .bind(
        ...contentBindings(input.content),
        input.authorId,
        input.restoredFrom,
        input.now,
        input.profileId,
        input.base,
      ),
    db
      .prepare(
        `UPDATE assistant_profiles SET current_version = current_version + 1, updated_at = ?
         WHERE id = ? AND current_version = ?`,
      )
      .bind(input.now, input.profileId, input.base),
  ];
}

/** Two contents say the same (a PATCH that changes nothing makes no version). */
export function sameContent(a: ProfileContent, b: ProfileContent): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
