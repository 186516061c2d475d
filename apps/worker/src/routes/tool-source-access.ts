import { AppError } from "@parley/shared";
import { orgAccess } from "../auth/access.ts";
import { toolSettings } from "../tools/settings.ts";
import { type SourceRow, sourceById, toToolSource } from "../tools/sources-db.ts";
import { checkSourceUrl, sourceAllowList } from "../tools/url-rule.ts";

/**
 * What the tool-source routes share (tool-sources.ts, tool-source-import.ts): the source with the
 * caller's role, as shown, and the URL rule. Another org's source is a missing one (404).
 */

/** A source URL the allow-list refuses is `invalid_request` on `url`. */
export const refuseUrl = (url: string, env: Env) => {
  const checked = checkSourceUrl(url, sourceAllowList(env));
  if (!checked.ok) {
    throw new AppError("invalid_request", `url: ${checked.reason}`, { field: "url" });
  }
};

/** The source and the caller's role in its org; another org's source is 404. */
export async function sourceAccess(db: D1Database, userId: string, id: string) {
  const row = await sourceById(db, id);
  if (!row) throw new AppError("not_found", "Tool source not found");
  const access = await orgAccess(db, userId, row.org_id).catch(() => {
    throw new AppError("not_found", "Tool source not found");
  });
  return { row, access };
}

/** A source as the API shows it (health from its failures; never its credential). */
export const shown = (env: Env, row: SourceRow) =>
  toToolSource(row, toolSettings(env).unhealthyAfter);

/** The source as stored now (after a write); 404 when it is gone. */
export async function reread(db: D1Database, id: string): Promise<SourceRow> {
  const row = await sourceById(db, id);
  if (!row) throw new AppError("not_found", "Tool source not found");
  return row;
}
