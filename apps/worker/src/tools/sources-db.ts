import {
  type HttpAction,
  isReservedToolName,
  MAX_SOURCE_TOOLS,
  type SourceTool,
  sourceToolRef,
  type ToolAccess,
  type ToolCall,
  type ToolCallStatus,
  type ToolSource,
} from "@parley/shared";
import { iso } from "../db/pagination.ts";
import type { ListedTool } from "./mcp-tools.ts";
import type { SourceRef } from "./source-client.ts";

/**
 * Tool sources and tool call records in D1 (migrations/0024_tool_sources.sql). SQL lives here; the
 * routes validate and shape, the source's client object writes health and listed tools.
 */

/** A tool as kept in `tool_sources.tools`: an MCP server's listing, or an HTTP action. */
export interface StoredTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** MCP: the server's readOnlyHint at the last listing. */
  readOnly?: boolean;
  /**
   * HTTP: as written. MCP: what Parley accepted from the server's hints (`writeListedTools`):
   * read only when the first listing said so and no listing since said otherwise.
   */
  access?: ToolAccess;
  /**
   * MCP: a tool the server no longer lists, kept (hidden) only so its accepted access is
   * remembered: a server cannot drop a write tool and list it again as read to shed approvals.
   */
  gone?: true;
  method?: HttpAction["method"];
  path?: string;
  usable: boolean;
}

export interface SourceRow {
  id: string;
  org_id: string;
  kind: "mcp" | "http";
  name: string;
  description: string | null;
  url: string;
  price_micros: number;
  /** 0: switched off by an owner or admin (migrations/0026): no turn offers its tools. */
  enabled: number;
  credential_header: string | null;
  credential_sealed: string | null;
  access_overrides: string;
  tools: string;
  tools_listed_at: number | null;
  version: number;
  consecutive_failures: number;
  last_error: string | null;
  last_error_at: number | null;
  last_success_at: number | null;
  created_by: string | null;
  created_at: number;
  updated_at: number;
}

export const SOURCE_COLUMNS = `id, org_id, kind, name, description, url, price_micros, enabled,
  credential_header, credential_sealed, access_overrides, tools, tools_listed_at, version,
  consecutive_failures, last_error, last_error_at, last_success_at, created_by, created_at,
  updated_at`;

/** What the server's hint says of an MCP tool now. */
const hinted = (tool: StoredTool): ToolAccess => (tool.readOnly === true ? "read" : "write");

/** What Parley accepted of an MCP tool's hints (a tool stored before `access` was kept: its hint). */
const accepted = (tool: StoredTool): ToolAccess => tool.access ?? hinted(tool);

/**
 * A source's tools, each with whether it reads or writes (write unless marked read). For an MCP
 * tool: an owner's or admin's mark, else what Parley accepted of the server's hints, which a
 * later listing can make stricter but never looser (`writeListedTools`); `serverAccess` is what
 * the server says now, so a difference can be shown.
 */
export function toolsOf(row: Pick<SourceRow, "id" | "kind" | "tools" | "access_overrides">) {
  const overrides = JSON.parse(row.access_overrides) as Record<string, ToolAccess>;
  return (JSON.parse(row.tools) as StoredTool[])
    .filter((tool) => tool.gone !== true)
    .map(
      (tool): SourceTool => ({
        name: tool.name,
        ref: sourceToolRef(row.id, tool.name),
        description: tool.description,
        access:
          row.kind === "http" ? (tool.access ?? "write") : (overrides[tool.name] ?? accepted(tool)),
        serverAccess: row.kind === "http" ? null : hinted(tool),
        inputSchema: tool.inputSchema,
        method: tool.method ?? null,
        path: tool.path ?? null,
        // A tool listed before built-in names were reserved is unusable too.
        usable: tool.usable && !isReservedToolName(tool.name),
      }),
    );
}

/** What a call needs of its source (never its tools' list). */
export const sourceRef = (row: SourceRow): SourceRef => ({
  id: row.id,
  orgId: row.org_id,
  kind: row.kind,
  url: row.url,
  version: row.version,
  credentialHeader: row.credential_header,
  credentialSealed: row.credential_sealed,
});

/**
 * The class of a source's last error (`timeout`, `unauthorized`, ...): the code its writers put
 * before the message (`<code>: <message>`), what a screen may show without the message's text.
 */
export function errorClass(lastError: string | null): string | null {
  const code = lastError === null ? null : /^([a-z_]{1,40}):/.exec(lastError)?.[1];
  return code ?? (lastError === null ? null : "error");
}

/**
 * A source as the API shows it: its credential's header, never its value. `errorText`: whether
 * the reader may see the last error's text (owners and admins, who fix the source) or only its
 * class (`lastErrorCode`): the text can quote the tenant's server (a stack, an internal host, a
 * body it answered), which is theirs to see, not every member's.
 */
export function toToolSource(
  row: SourceRow,
  unhealthyAfter: number,
  { errorText }: { errorText: boolean },
): ToolSource {
  const status =
    row.consecutive_failures >= unhealthyAfter
      ? "unhealthy"
      : row.last_success_at === null && row.last_error_at === null
        ? "unknown"
        : "healthy";
  return {
    id: row.id,
    orgId: row.org_id,
    kind: row.kind,
    name: row.name,
    description: row.description,
    url: row.url,
    priceMicros: row.price_micros,
    enabled: row.enabled === 1,
    credential: row.credential_header ? { header: row.credential_header } : null,
    access: JSON.parse(row.access_overrides) as Record<string, ToolAccess>,
    tools: toolsOf(row),
    toolsListedAt: row.tools_listed_at === null ? null : iso(row.tools_listed_at),
    version: row.version,
    health: {
      status,
      consecutiveFailures: row.consecutive_failures,
      lastError: errorText ? row.last_error : null,
      lastErrorCode: errorClass(row.last_error),
      lastErrorAt: row.last_error_at === null ? null : iso(row.last_error_at),
      lastSuccessAt: row.last_success_at === null ? null : iso(row.last_success_at),
    },
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** An org's source by id, or null (another org's is null too: the caller answers 404). */
export function sourceOfOrg(db: D1Database, orgId: string, id: string): Promise<SourceRow | null> {
  return db
    .prepare(`SELECT ${SOURCE_COLUMNS} FROM tool_sources WHERE id = ? AND org_id = ?`)
    .bind(id, orgId)
    .first<SourceRow>();
}

/** A source by id alone (the route then authorizes its org). */
export function sourceById(db: D1Database, id: string): Promise<SourceRow | null> {
  return db
    .prepare(`SELECT ${SOURCE_COLUMNS} FROM tool_sources WHERE id = ?`)
    .bind(id)
    .first<SourceRow>();
}

/** The org's switched-on sources among `ids` (a turn's profile names them). */
export async function sourcesOfOrg(
  db: D1Database,
  orgId: string,
  ids: readonly string[],
): Promise<SourceRow[]> {
  if (ids.length === 0) return [];
  const { results } = await db
    .prepare(
      `SELECT ${SOURCE_COLUMNS} FROM tool_sources
       WHERE org_id = ? AND enabled = 1 AND id IN (SELECT value FROM json_each(?))`,
    )
    .bind(orgId, JSON.stringify([...new Set(ids)]))
    .all<SourceRow>();
  return results;
}

/** Every tool name an org's profiles may switch on (`source:<id>:<name>`), usable ones only. */
export async function orgToolRefs(
  db: D1Database,
  orgId: string,
): Promise<{ ref: string; description: string }[]> {
  const { results } = await db
    .prepare("SELECT id, kind, tools, access_overrides FROM tool_sources WHERE org_id = ?")
    .bind(orgId)
    .all<Pick<SourceRow, "id" | "kind" | "tools" | "access_overrides">>();
  return results.flatMap((row) =>
    toolsOf(row)
      .filter((tool) => tool.usable)
      .map((tool) => ({ ref: tool.ref, description: tool.description })),
  );
}

/** Health after a call: failures in a row (reset by a success), the last error, the last success. */
export async function recordHealth(
  db: D1Database,
  id: string,
  outcome: { ok: true; at: number } | { ok: false; at: number; error: string },
): Promise<void> {
  if (outcome.ok) {
    await db
      .prepare("UPDATE tool_sources SET consecutive_failures = 0, last_success_at = ? WHERE id = ?")
      .bind(outcome.at, id)
      .run();
    return;
  }
  await db
    .prepare(
      `UPDATE tool_sources SET consecutive_failures = consecutive_failures + 1, last_error = ?,
         last_error_at = ? WHERE id = ?`,
    )
    .bind(outcome.error, outcome.at, id)
    .run();
}

/**
 * An MCP source's tools as just listed: THE one place a listing is recorded (registration, the
 * refresh route, the source's client object on the server's `list_changed`, any path to come).
 * The server's hints may make a tool stricter at once but never looser: a tool Parley held as
 * write stays write when the server now says `readOnlyHint: true` (an owner or admin may mark it
 * read: `access` on the source); a tool hinted read that loses the hint becomes write. A tool
 * seen for the first time is read only when hinted so. Tools the server stopped listing are
 * remembered (hidden, at most `MAX_SOURCE_TOOLS`) with what was accepted, so dropping a write
 * tool and listing it again as read does not shed its approvals. Written as a compare-and-swap
 * on the stored list, so two listings at once cannot lose one's accepted access.
 */
export async function writeListedTools(
  db: D1Database,
  id: string,
  tools: readonly ListedTool[],
  _truncated: boolean,
  now = Date.now(),
): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await db
      .prepare("SELECT tools FROM tool_sources WHERE id = ? AND kind = 'mcp'")
      .bind(id)
      .first<{ tools: string }>();
    if (!current) return;
    const known = new Map(
      (JSON.parse(current.tools) as StoredTool[]).map((tool) => [tool.name, tool]),
    );
    const stored: StoredTool[] = tools.map((tool) => {
      const before = known.get(tool.name);
      const hint: ToolAccess = tool.readOnly ? "read" : "write";
      return {
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
        readOnly: tool.readOnly,
        access: before && accepted(before) === "write" ? "write" : hint,
        usable: tool.usable,
      };
    });
    const listed = new Set(tools.map((tool) => tool.name));
    const remembered: StoredTool[] = [...known.values()]
      .filter((tool) => !listed.has(tool.name))
      .slice(0, MAX_SOURCE_TOOLS)
      .map((tool) => ({
        name: tool.name,
        description: "",
        inputSchema: {},
        access: accepted(tool),
        usable: false,
        gone: true,
      }));
    const written = await db
      .prepare(
        `UPDATE tool_sources SET tools = ?, tools_listed_at = ?, updated_at = ?
         WHERE id = ? AND kind = 'mcp' AND tools = ?`,
      )
      .bind(JSON.stringify([...stored, ...remembered]), now, now, id, current.tools)
      .run();
    if (written.meta.changes === 1) return;
  }
  throw new Error("The source's tools changed under five listings in a row");
}

/**
 * What a listing of an MCP source leaves in D1, the same for every listing (registration, the
 * refresh route, the source's listener after `list_changed` or a reopened stream): a listed
 * source gets the new tools and a success (a tool the server no longer lists is gone from the
 * source; a profile that switched it on keeps the name, shown as no longer listed, and a turn
 * does not offer it); a failed one keeps its tools and counts a failure with its error.
 */
export async function recordListing(
  db: D1Database,
  id: string,
  listed:
    | { ok: true; tools: readonly ListedTool[]; truncated: boolean }
    | { ok: false; code: string; message: string },
  now = Date.now(),
): Promise<void> {
  if (listed.ok) {
    await writeListedTools(db, id, listed.tools, listed.truncated, now);
    await recordHealth(db, id, { ok: true, at: now });
    return;
  }
  await recordHealth(db, id, {
    ok: false,
    at: now,
    error: `${listed.code}: ${listed.message}`.slice(0, 300),
  });
}

/** HTTP actions as stored tools. */
export const storedActions = (actions: readonly HttpAction[]): StoredTool[] =>
  actions.map((action) => ({
    name: action.name,
    description: action.description,
    inputSchema: action.inputSchema,
    access: action.access,
    method: action.method,
    path: action.path,
    usable: true,
  }));

// ---- tool call records ----

export interface CallRecord {
  id: string;
  orgId: string;
  sourceId: string;
  toolName: string;
  sessionId: string | null;
  projectId: string | null;
  callerKind: "member" | "end_user";
  callerId: string;
  appId: string | null;
  access: ToolAccess;
  approvedBy: string | null;
  status: ToolCallStatus;
  errorCode: string | null;
  durationMs: number;
  requestBytes: number;
  responseBytes: number;
  priceMicros: number;
  createdAt: number;
}

/** Writes calls' records in one D1 batch (the settled calls of one round); a replay is harmless. */
export async function recordCalls(db: D1Database, calls: readonly CallRecord[]): Promise<void> {
  if (calls.length === 0) return;
  await db.batch(calls.map((call) => recordStatement(db, call)));
}

function recordStatement(db: D1Database, call: CallRecord): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO tool_calls (id, org_id, source_id, tool_name, session_id, project_id,
         caller_kind, caller_id, app_id, access, approved_by, status, error_code, duration_ms,
         request_bytes, response_bytes, price_micros, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO NOTHING`,
    )
    .bind(
      call.id,
      call.orgId,
      call.sourceId,
      call.toolName,
      call.sessionId,
      call.projectId,
      call.callerKind,
      call.callerId,
      call.appId,
      call.access,
      call.approvedBy,
      call.status,
      call.errorCode,
      call.durationMs,
      call.requestBytes,
      call.responseBytes,
      call.priceMicros,
      call.createdAt,
    );
}

export interface CallRow {
  id: string;
  org_id: string;
  source_id: string;
  tool_name: string;
  session_id: string | null;
  caller_kind: "member" | "end_user";
  caller_id: string;
  access: ToolAccess;
  approved_by: string | null;
  status: ToolCallStatus;
  error_code: string | null;
  duration_ms: number;
  request_bytes: number;
  response_bytes: number;
  price_micros: number;
  created_at: number;
}

export const CALL_COLUMNS = `id, org_id, source_id, tool_name, session_id, caller_kind, caller_id,
  access, approved_by, status, error_code, duration_ms, request_bytes, response_bytes,
  price_micros, created_at`;

export const toToolCall = (row: CallRow): ToolCall => ({
  id: row.id,
  sourceId: row.source_id,
  toolName: row.tool_name,
  sessionId: row.session_id,
  caller: { kind: row.caller_kind, id: row.caller_id },
  access: row.access,
  approvedBy: row.approved_by,
  status: row.status,
  errorCode: row.error_code,
  durationMs: row.duration_ms,
  requestBytes: row.request_bytes,
  responseBytes: row.response_bytes,
  priceMicros: row.price_micros,
  createdAt: iso(row.created_at),
});
