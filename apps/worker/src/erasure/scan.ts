/**
 * The erasure job's verification scan, over every table of a store rather than a list of the
 * places we remember writing to: a table added later is scanned too, so a new place that keeps an
 * identifier makes the erasure fail verification instead of passing silently.
 */

/** Where an identifier may stay by design, with the reason (see docs/ on data retention). */
export interface Allowance {
  table: string;
  column?: string;
  why: string;
}

export interface Finding {
  table: string;
  column: string;
  rows: number;
}

/** Text-like columns of a table, as SQLite declares them (untyped columns can hold text too). */
const isTextual = (type: string) => type === "" || /CHAR|CLOB|TEXT/i.test(type);

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A store the scan reads: D1, or a Durable Object's SQLite (synchronous, wrapped). */
export interface ScanSource {
  all(sql: string, ...bindings: (string | number | null)[]): Promise<Record<string, unknown>[]>;
}

export function d1Source(db: D1Database): ScanSource {
  return {
    all: async (sql, ...bindings) =>
      (
        await db
          .prepare(sql)
          .bind(...bindings)
          .all<Record<string, unknown>>()
      ).results,
  };
}

export function sqlSource(sql: SqlStorage): ScanSource {
  return {
    all: async (query, ...bindings) =>
      sql.exec(query, ...bindings).toArray() as Record<string, unknown>[],
  };
}

export interface ScanOptions {
  /** The identifiers that must be gone (ids, an email). */
  needles: readonly string[];
  /** Only rows of this org, in tables that have an `org_id` column; tables without one are skipped. */
  orgId?: string;
  /** Rows to leave out per table (a SQL condition on that table), e.g. the erasure request itself. */
  excludeRows?: Record<string, { where: string; bindings: (string | number)[] }>;
  allow?: readonly Allowance[];
}

/**
 * Counts, for every user table of the store and every text column, the rows that still contain any
 * needle, in any letter case. Platform tables (`sqlite_*`, `_cf_*`, D1's `d1_*`) are left out: they hold no user data.
 */
export async function scanStore(source: ScanSource, options: ScanOptions): Promise<Finding[]> {
  // Case does not hide an identifier (an email typed in capitals is the same email): both sides
  // are compared in lower case (SQLite's lower() folds ASCII, which ids and emails are).
  const needles = options.needles.filter((n) => n.length > 0).map((n) => n.toLowerCase());
  if (needles.length === 0) return [];
  const tables = await source.all(
    `SELECT name FROM sqlite_master WHERE type = 'table'
     AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\'
     AND name NOT LIKE 'd1\\_%' ESCAPE '\\'`,
  );
  const findings: Finding[] = [];
  for (const { name } of tables as { name: string }[]) {
    const columns = (await source.all("SELECT name, type FROM pragma_table_info(?)", name)) as {
      name: string;
      type: string;
    }[];
    const hasOrg = columns.some((c) => c.name === "org_id");
    if (options.orgId !== undefined && !hasOrg) continue;
    const excluded = options.excludeRows?.[name];
    for (const column of columns) {
      if (!isTextual(column.type)) continue;
      const allowed = options.allow?.some(
        (a) => a.table === name && (a.column === undefined || a.column === column.name),
      );
      if (allowed) continue;
      const conditions = [
        `(${needles.map(() => `instr(lower(${quote(column.name)}), ?) > 0`).join(" OR ")})`,
      ];
      const bindings: (string | number)[] = [...needles];
      if (options.orgId !== undefined) {
        conditions.push("org_id = ?");
        bindings.push(options.orgId);
      }
      if (excluded) {
        conditions.push(`NOT (${excluded.where})`);
        bindings.push(...excluded.bindings);
      }
      const [row] = await source.all(
        `SELECT COUNT(*) AS n FROM ${quote(name)} WHERE ${conditions.join(" AND ")}`,
        ...bindings,
      );
      const rows = Number(row?.n ?? 0);
      if (rows > 0) findings.push({ table: name, column: column.name, rows });
    }
  }
  return findings;
}
