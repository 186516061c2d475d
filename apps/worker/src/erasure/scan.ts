import { type Replacement, scrubText } from "./scrub.ts";

/**
 * The erasure job's reach over a whole store: every table and text column, rather than a list of
 * the places we remember writing to. The verification scan counts what still names the person, and
 * the scrub replaces it (their ids by their pseudonym, their email by `[erased]`) wherever it is
 * left once the targeted steps ran: a project named after them, a colleague's display name holding
 * their email, a webhook URL with their id. Both walk the same places, so whatever the scan could
 * find, the scrub has cleaned; a table added later is covered by both.
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

type Binding = string | number | null;

/** A store the scan reads and the scrub writes: D1, or a Durable Object's SQLite. */
export interface ScanSource {
  all(sql: string, ...bindings: Binding[]): Promise<Record<string, unknown>[]>;
  run(sql: string, ...bindings: Binding[]): Promise<void>;
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
    run: async (sql, ...bindings) => {
      await db
        .prepare(sql)
        .bind(...bindings)
        .run();
    },
  };
}

export function sqlSource(sql: SqlStorage): ScanSource {
  return {
    all: async (query, ...bindings) =>
      sql.exec(query, ...bindings).toArray() as Record<string, unknown>[],
    run: async (query, ...bindings) => {
      sql.exec(query, ...bindings);
    },
  };
}

/** A SQL condition on one table, with its bindings. */
export interface Condition {
  where: string;
  bindings: Binding[];
}

export interface ScanOptions {
  /** The identifiers that must be gone (ids, an email). */
  needles: readonly string[];
  /**
   * Only one org's rows: tables with an `org_id` column are read for that org, tables named in
   * `scopes` under their own condition, and every other table is left out (it is not the org's).
   */
  orgId?: string;
  /** Per table, which of its rows belong to the org (for tables without `org_id`). */
  scopes?: Record<string, Condition>;
  /** Rows to leave out per table. */
  excludeRows?: Record<string, Condition>;
  /** Cells to leave out: these columns, in the rows the condition picks (an erasure in flight). */
  excludeCells?: Record<string, Condition & { columns: readonly string[] }>;
  allow?: readonly Allowance[];
}

interface Place {
  table: string;
  column: string;
  /** The rows of the place that contain a needle (case-insensitively), and their bindings. */
  where: string;
  bindings: Binding[];
}

/** Every (table, text column) of the store the options reach, with the rows that name a needle. */
async function places(source: ScanSource, options: ScanOptions): Promise<Place[]> {
  // Case does not hide an identifier (an email typed in capitals is the same email): both sides
  // are compared in lower case (SQLite's lower() folds ASCII, which ids and emails are).
  const needles = options.needles.filter((n) => n.length > 0).map((n) => n.toLowerCase());
  if (needles.length === 0) return [];
  // Every table's columns in one read (a read per table made each scan dozens of round trips).
  const described = (await source.all(
    `SELECT m.name AS tbl, p.name AS name, p.type AS type
     FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table'
     AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND m.name NOT LIKE '\\_cf\\_%' ESCAPE '\\'
     AND m.name NOT LIKE 'd1\\_%' ESCAPE '\\' ORDER BY m.name, p.cid`,
  )) as { tbl: string; name: string; type: string }[];
  const tables = new Map<string, { name: string; type: string }[]>();
  for (const column of described) {
    const list = tables.get(column.tbl) ?? [];
    list.push({ name: column.name, type: column.type });
    tables.set(column.tbl, list);
  }
  const found: Place[] = [];
  for (const [name, columns] of tables) {
    const scope: Condition | null =
      options.orgId === undefined
        ? null
        : columns.some((c) => c.name === "org_id")
          ? { where: "org_id = ?", bindings: [options.orgId] }
          : (options.scopes?.[name] ?? { where: "0", bindings: [] });
    if (scope?.where === "0") continue;
    const excluded = options.excludeRows?.[name];
    for (const column of columns) {
      if (!isTextual(column.type)) continue;
      const allowed = options.allow?.some(
        (a) => a.table === name && (a.column === undefined || a.column === column.name),
      );
      if (allowed) continue;
      // The needles as one JSON value: D1 and a Durable Object bind at most 100 parameters, and
      // a project's erasure looks for every one of its sessions. The column is named with its
      // table: json_each has columns of its own (`id`, `key`, `value`, ...).
      const conditions = [
        `EXISTS (SELECT 1 FROM json_each(?) AS needle WHERE instr(lower(${quote(name)}.${quote(column.name)}), needle.value) > 0)`,
      ];
      const bindings: Binding[] = [JSON.stringify(needles)];
      if (scope) {
        conditions.push(`(${scope.where})`);
        bindings.push(...scope.bindings);
      }
      if (excluded) {
        conditions.push(`NOT (${excluded.where})`);
        bindings.push(...excluded.bindings);
      }
      const cells = options.excludeCells?.[name];
      if (cells?.columns.includes(column.name)) {
        conditions.push(`NOT (${cells.where})`);
        bindings.push(...cells.bindings);
      }
      found.push({ table: name, column: column.name, where: conditions.join(" AND "), bindings });
    }
  }
  return found;
}

/**
 * Counts, for every user table of the store and every text column, the rows that still contain any
 * needle, in any letter case. Platform tables (`sqlite_*`, `_cf_*`, D1's `d1_*`) are left out: they
 * hold no user data.
 */
export async function scanStore(source: ScanSource, options: ScanOptions): Promise<Finding[]> {
  const findings: Finding[] = [];
  const all = await places(source, options);
  const counts = await countAll(source, all);
  all.forEach((place, i) => {
    const rows = counts[i] ?? 0;
    if (rows > 0) findings.push({ table: place.table, column: place.column, rows });
  });
  return findings;
}

/** The most bindings one counting query takes (D1 binds at most 100). */
const MAX_BINDINGS = 90;

/**
 * How many rows name a needle, for every place: one query per table (and per 90 bindings), each
 * place a column of it, instead of one query per column.
 */
async function countAll(source: ScanSource, all: readonly Place[]): Promise<number[]> {
  const counts = new Array<number>(all.length).fill(0);
  const byTable = new Map<string, number[]>();
  all.forEach((place, i) => {
    const list = byTable.get(place.table) ?? [];
    list.push(i);
    byTable.set(place.table, list);
  });
  for (const [table, indexes] of byTable) {
    let group: number[] = [];
    let bound = 0;
    const flush = async () => {
      if (group.length === 0) return;
      const sums = group.map(
        (i, n) => `SUM(CASE WHEN ${all[i]?.where} THEN 1 ELSE 0 END) AS c${n}`,
      );
      const [row] = await source.all(
        `SELECT ${sums.join(", ")} FROM ${quote(table)}`,
        ...group.flatMap((i) => all[i]?.bindings ?? []),
      );
      group.forEach((i, n) => {
        counts[i] = Number(row?.[`c${n}`] ?? 0);
      });
      group = [];
      bound = 0;
    };
    for (const i of indexes) {
      const size = all[i]?.bindings.length ?? 0;
      if (bound + size > MAX_BINDINGS) await flush();
      group.push(i);
      bound += size;
    }
    await flush();
  }
  return counts;
}

/**
 * Replaces, wherever the scan would find them, each needle by its replacement (in any letter
 * case). A value is rewritten where it stands (`WHERE column = old value`), which works for every
 * table, rowid or not. Returns how many values changed.
 */
export async function scrubStore(
  source: ScanSource,
  replacements: readonly Replacement[],
  options: Omit<ScanOptions, "needles">,
): Promise<number> {
  let changed = 0;
  const needles = replacements.map((r) => r.find);
  const all = await places(source, { ...options, needles });
  const counts = await countAll(source, all);
  // Only the places that hold a needle are read value by value.
  for (const place of all.filter((_, i) => (counts[i] ?? 0) > 0)) {
    const column = quote(place.column);
    const rows = await source.all(
      `SELECT DISTINCT ${column} AS v FROM ${quote(place.table)} WHERE ${place.where}`,
      ...place.bindings,
    );
    for (const { v } of rows as { v: string }[]) {
      const scrubbed = scrubText(v, replacements);
      if (scrubbed === v) continue;
      // OR IGNORE: a rewrite that would collide with a unique key is left for the scan to report.
      await source.run(
        `UPDATE OR IGNORE ${quote(place.table)} SET ${column} = ? WHERE ${column} = ? AND ${place.where}`,
        scrubbed,
        v,
        ...place.bindings,
      );
      changed++;
    }
  }
  return changed;
}
