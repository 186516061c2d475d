import { DurableObject } from "cloudflare:workers";
import { EXPORT_FORMAT, EXPORT_FORMAT_VERSION } from "@parley/shared";
import { sha256Base64Url, toBase64Url } from "../auth/encoding.ts";
import { shownReason } from "../http/errors.ts";
import { type ExportRow, planUnits, readUnit, type Unit } from "./sections.ts";

/** Units one alarm runs before it hands over to the next alarm (bounds one invocation's work). */
export const SLICE_UNITS = 20;
/** How long a finished archive and its link live. */
export const EXPORT_TTL_MS = 24 * 60 * 60 * 1000;
/** When the alarm takes over if a run the Worker started does not go on (a crash, an eviction). */
const SAFETY_NET_MS = 30_000;
const MAX_ATTEMPTS = 6;
/** Largest piece of text one SQLite row holds here (rows are limited to 2 MB). */
const PIECE_CHARS = 256 * 1024;

/**
 * One data export (name = export id): its SQLite holds the plan, the cursor and the archive in
 * chunks, written unit by unit (a section, or one session's transcript) with the cursor in the same
 * transaction, so a reset resumes at the first unit not written and writes no unit twice. The
 * alarm drives the job a slice at a time and, once the archive is done, deletes it when its link
 * expires. D1's `data_exports` row is the request (status, progress, the link's hash).
 */
export class DataExport extends DurableObject<Env> {
  #sql: SqlStorage;
  #current: Promise<ExportRow["status"]> | null = null;
  /** Set by `purge`: a run in flight writes nothing more. */
  #purged = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec(
      `CREATE TABLE IF NOT EXISTS export_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
       CREATE TABLE IF NOT EXISTS export_chunks (
         seq INTEGER PRIMARY KEY AUTOINCREMENT, unit INTEGER NOT NULL, body TEXT NOT NULL);`,
    );
  }

  #meta(key: string): string | null {
    const row = this.#sql.exec("SELECT value FROM export_meta WHERE key = ?", key).toArray()[0];
    return row ? String(row.value) : null;
  }

  #setMeta(key: string, value: string): void {
    this.#sql.exec(
      "INSERT INTO export_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      key,
      value,
    );
  }

  async #row(exportId: string): Promise<ExportRow | null> {
    return this.env.DB.prepare("SELECT * FROM data_exports WHERE id = ?")
      .bind(exportId)
      .first<ExportRow>();
  }

  /**
   * Plans the export (idempotent) and sets the alarm that runs it: the Worker's request answers
   * at once with the progress's total, and the job goes on in the background.
   */
  async start(exportId: string): Promise<{ total: number }> {
    const row = await this.#row(exportId);
    if (!row) return { total: 0 };
    const units = await this.#plan(row);
    await this.ctx.storage.setAlarm(Date.now());
    return { total: units.length };
  }

  async #plan(row: ExportRow): Promise<Unit[]> {
    const planned = this.#meta("units");
    if (planned) return JSON.parse(planned) as Unit[];
    const units = await planUnits(this.env, row);
    this.ctx.storage.transactionSync(() => {
      this.#setMeta("exportId", row.id);
      this.#setMeta("units", JSON.stringify(units));
      this.#setMeta("next", "0");
      this.#setMeta("generatedAt", new Date().toISOString());
    });
    await this.env.DB.prepare(
      "UPDATE data_exports SET progress_total = ?, updated_at = ? WHERE id = ? AND status IN ('pending', 'running')",
    )
      .bind(units.length, Date.now(), row.id)
      .run();
    return units;
  }

  override async alarm(): Promise<void> {
    const exportId = this.#meta("exportId");
    if (!exportId) return;
    const row = await this.#row(exportId);
    if (row?.status === "completed") {
      // The link's time is up: the archive goes, the request stays as its record.
      if (row.expires_at !== null && row.expires_at <= Date.now()) await this.#expire(row.id);
      else if (row.expires_at !== null) await this.ctx.storage.setAlarm(row.expires_at);
      return;
    }
    const status = await this.run(exportId, SLICE_UNITS, { fromAlarm: true });
    if (status === "running" && !this.#purged) {
      const retryAt = Number(this.#meta("retryAt") ?? 0);
      await this.ctx.storage.setAlarm(Math.max(Date.now(), retryAt));
    }
  }

  /**
   * Runs up to `budget` units; one run at a time (a second caller joins the run in progress).
   * Between alarms the safety net stays set, so a run cut short by a reset resumes by itself.
   */
  run(
    exportId: string,
    budget = SLICE_UNITS,
    options: { fromAlarm?: boolean } = {},
  ): Promise<ExportRow["status"]> {
    if (!this.#current) {
      this.#current = this.#run(exportId, budget, options.fromAlarm ?? false).finally(() => {
        this.#current = null;
      });
    }
    return this.#current;
  }

  async #run(exportId: string, budget: number, fromAlarm: boolean): Promise<ExportRow["status"]> {
    const db = this.env.DB;
    const row = await this.#row(exportId);
    if (!row) {
      // Its request was deleted (an erasure reached it): nothing of the archive may stay.
      await this.purge();
      return "failed";
    }
    if (row.status === "completed" || row.status === "failed") return row.status;
    if (!fromAlarm) await this.ctx.storage.setAlarm(Date.now() + SAFETY_NET_MS);
    const refusal = await this.#refusal(row);
    if (refusal) return this.#fail(row, refusal);
    const units = await this.#plan(row);
    let next = Number(this.#meta("next") ?? 0);
    if (row.status === "pending") {
      await db
        .prepare(
          "UPDATE data_exports SET status = 'running', updated_at = ? WHERE id = ? AND status = 'pending'",
        )
        .bind(Date.now(), row.id)
        .run();
    }
    for (let done = 0; next < units.length && done < budget; done++) {
      const unit = units[next] as Unit;
      let value: unknown;
      try {
        value = await readUnit(this.env, row, unit);
      } catch (error) {
        return this.#retry(row, error);
      }
      if (this.#purged) return "failed";
      const index = next;
      const before = unit.first ? 0 : Number(this.#meta("items") ?? 0);
      const body = frame(unit, value, before);
      const items = before + (unit.key !== undefined && value !== null ? 1 : 0);
      this.ctx.storage.transactionSync(() => {
        this.#sql.exec("DELETE FROM export_chunks WHERE unit = ?", index);
        for (const piece of pieces(body)) {
          this.#sql.exec("INSERT INTO export_chunks (unit, body) VALUES (?, ?)", index, piece);
        }
        this.#setMeta("next", String(index + 1));
        this.#setMeta("items", String(items));
        this.#setMeta("attempts", "0");
      });
      next = index + 1;
      await db
        .prepare(
          "UPDATE data_exports SET status = 'running', progress_done = ?, updated_at = ? WHERE id = ? AND status IN ('pending', 'running')",
        )
        .bind(next, Date.now(), row.id)
        .run();
    }
    if (next < units.length) return "running";
    return this.#complete(row);
  }

  /** Why the export may not go on: its subject erased, or the org's owner no longer one. */
  async #refusal(row: ExportRow): Promise<string | null> {
    const erased = await this.env.DB.prepare(
      "SELECT 1 AS t FROM tombstones WHERE subject_id = ? OR subject_id = ?",
    )
      .bind(row.subject_user_id, row.org_id ?? "")
      .first();
    if (erased) return "the subject was erased";
    if (row.kind === "org") {
      const owner = await this.env.DB.prepare(
        "SELECT 1 AS ok FROM memberships WHERE org_id = ? AND user_id = ? AND role = 'owner'",
      )
        .bind(row.org_id, row.requested_by)
        .first();
      if (!owner) return "the requester is no longer an owner of the organization";
    }
    return null;
  }

  async #complete(row: ExportRow): Promise<ExportRow["status"]> {
    // The archive's header and end, around the units' chunks.
    const header = JSON.stringify({
      format: EXPORT_FORMAT,
      version: EXPORT_FORMAT_VERSION,
      kind: row.kind,
      exportId: row.id,
      subjectUserId: row.kind === "account" ? row.subject_user_id : null,
      orgId: row.org_id,
      generatedAt: this.#meta("generatedAt"),
    });
    const now = Date.now();
    const secret = toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
    const size = this.ctx.storage.transactionSync(() => {
      this.#setMeta("header", `${header.slice(0, -1)},"sections":{`);
      this.#setMeta("footer", "}}");
      this.#setMeta("secret", secret);
      const sum = this.#sql
        .exec("SELECT COALESCE(SUM(LENGTH(CAST(body AS BLOB))), 0) AS n FROM export_chunks")
        .one().n as number;
      return sum + new TextEncoder().encode(`${header.slice(0, -1)},"sections":{}}`).length;
    });
    const expiresAt = now + EXPORT_TTL_MS;
    await this.env.DB.prepare(
      `UPDATE data_exports SET status = 'completed', progress_done = progress_total, updated_at = ?,
         completed_at = ?, expires_at = ?, secret_hash = ?, size_bytes = ? WHERE id = ? AND status IN ('pending', 'running')`,
    )
      .bind(now, now, expiresAt, await sha256Base64Url(secret), size, row.id)
      .run();
    await this.ctx.storage.setAlarm(expiresAt);
    return "completed";
  }

  async #retry(row: ExportRow, error: unknown): Promise<ExportRow["status"]> {
    const attempts = Number(this.#meta("attempts") ?? 0) + 1;
    this.#setMeta("attempts", String(attempts));
    if (attempts >= MAX_ATTEMPTS) {
      // The requester reads `error`: the cause's own text (it may name internals) is logged.
      console.error(
        JSON.stringify({
          level: "error",
          source: "export",
          event: "export_failed",
          error: error instanceof Error ? `${error.name}: ${error.message}` : "non-error thrown",
        }),
      );
      return this.#fail(row, shownReason(error, "a store could not be read; ask for a new export"));
    }
    const retryAt = Date.now() + 1000 * 2 ** attempts;
    this.#setMeta("retryAt", String(retryAt));
    await this.ctx.storage.setAlarm(retryAt);
    return "running";
  }

  async #fail(row: ExportRow, reason: string): Promise<ExportRow["status"]> {
    await this.env.DB.prepare(
      "UPDATE data_exports SET status = 'failed', error = ?, updated_at = ? WHERE id = ? AND status IN ('pending', 'running')",
    )
      .bind(reason.slice(0, 300), Date.now(), row.id)
      .run();
    await this.purge();
    return "failed";
  }

  async #expire(exportId: string): Promise<void> {
    await this.purge();
    await this.env.DB.prepare(
      "UPDATE data_exports SET purged_at = ? WHERE id = ? AND purged_at IS NULL",
    )
      .bind(Date.now(), exportId)
      .run();
  }

  /** Deletes the archive and everything else this object holds (expiry, failure, erasure). */
  async purge(): Promise<{ purged: true }> {
    this.#purged = true;
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    return { purged: true };
  }

  /** The raw download secret, for the person who asked (the Worker checks who asks). */
  secret(): string | null {
    if (this.#purged) return null;
    return this.#meta("secret");
  }

  /**
   * A page of the finished archive, in order: the header, the units' chunks, the end. `after` is
   * the last chunk's seq of the previous page (-1 for the first page, which starts with the header).
   */
  page(after: number, maxChars = 1024 * 1024): { text: string; next: number | null } {
    const header = this.#meta("header");
    if (this.#purged || header === null) return { text: "", next: null };
    let text = after < 0 ? header : "";
    let last = Math.max(after, 0);
    for (const row of this.#sql.exec(
      "SELECT seq, body FROM export_chunks WHERE seq > ? ORDER BY seq",
      Math.max(after, 0),
    )) {
      text += String(row.body);
      last = Number(row.seq);
      if (text.length >= maxChars) return { text, next: last };
    }
    return { text: text + (this.#meta("footer") ?? ""), next: null };
  }
}

/**
 * A unit's text in the archive: a comma before every section but the first, its key and brackets
 * where it starts or ends, and a comma between the items of a list. `items` is how many items of
 * the section were written before this unit (an item erased since the plan writes none).
 */
function frame(unit: Unit, value: unknown, items: number): string {
  const open = unit.first ? `${unit.follows ? "," : ""}${JSON.stringify(unit.section)}:` : "";
  if (unit.key === undefined && !unit.empty) return `${open}${JSON.stringify(value ?? null)}`;
  const item = value === null || value === undefined ? "" : JSON.stringify(value);
  return `${open}${unit.first ? "[" : ""}${item && items > 0 ? "," : ""}${item}${unit.last ? "]" : ""}`;
}

/** Splits text into pieces a row can hold, never between the two halves of a surrogate pair. */
function pieces(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + PIECE_CHARS, text.length);
    const code = text.charCodeAt(end - 1);
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end -= 1;
    out.push(text.slice(start, end));
    start = end;
  }
  return out.length > 0 ? out : [""];
}
