import { AppError, type Role } from "@parley/shared";
import { atLeast, orgAccess } from "../auth/access.ts";
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

/**
 * A sealed credential is bound to the origin it was entered for: a change of the source's URL to
 * another origin (scheme, host or port) must say in the same request what the new host gets, a
 * new `credential` or `credential: null`. Otherwise `invalid_request` on `credential`, before
 * anything changes: an admin who never saw the credential (the owner set it) cannot point the
 * source at a host of their choosing and have Parley send it there. A new path on the same origin
 * keeps it (the same server).
 */
export function refuseCredentialCarry(
  row: { url: string; credential_sealed: string | null },
  input: { url?: string | undefined; credential?: unknown },
): void {
  if (input.url === undefined || input.credential !== undefined) return;
  if (row.credential_sealed === null) return;
  if (new URL(input.url).origin === new URL(row.url).origin) return;
  throw new AppError(
    "invalid_request",
    "credential: the credential must be entered again for a new host (send credential, or credential: null to remove it, with the new url)",
    { field: "credential" },
  );
}

/** The source and the caller's role in its org; another org's source is 404. */
export async function sourceAccess(db: D1Database, userId: string, id: string) {
  const row = await sourceById(db, id);
  if (!row) throw new AppError("not_found", "Tool source not found");
  const access = await orgAccess(db, userId, row.org_id).catch(() => {
    throw new AppError("not_found", "Tool source not found");
  });
  return { row, access };
}

/**
 * A source as the API shows it to a caller of `role` (health from its failures; never its
 * credential): the last error's text only to owners and admins, members get its class.
 */
export const shown = (env: Env, row: SourceRow, role: Role) =>
  toToolSource(row, toolSettings(env).unhealthyAfter, { errorText: atLeast(role, "admin") });

/** The source as stored now (after a write); 404 when it is gone. */
export async function reread(db: D1Database, id: string): Promise<SourceRow> {
  const row = await sourceById(db, id);
  if (!row) throw new AppError("not_found", "Tool source not found");
  return row;
}
