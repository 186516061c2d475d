import { contentOf, VERSION_COLUMNS, type VersionRow } from "../assistants/profiles-db.ts";
import { iso } from "../db/pagination.ts";
import { all } from "./read.ts";

/**
 * What an archive holds of assistants (2026-12-06): an org's profiles with every version, and the
 * versions a person wrote. Read column by column like every section.
 */

const versionItem = (row: VersionRow) => ({
  profileId: row.profile_id,
  orgId: row.org_id,
  version: row.version,
  ...contentOf(row),
  authorId: row.author_id,
  restoredFrom: row.restored_from,
  createdAt: iso(row.created_at),
});

/** An org's profiles, each with its versions oldest first. */
export async function profileItems(db: D1Database, orgId: string) {
  const [profiles, versions] = await Promise.all([
    all<{ id: string; current_version: number; created_at: number; updated_at: number }>(
      db,
      `SELECT id, current_version, created_at, updated_at FROM assistant_profiles
       WHERE org_id = ? ORDER BY id`,
      orgId,
    ),
    all<VersionRow>(
      db,
      `SELECT ${VERSION_COLUMNS} FROM assistant_profile_versions v
       WHERE v.org_id = ? ORDER BY v.profile_id, v.version`,
      orgId,
    ),
  ]);
  return profiles.map((profile) => ({
    id: profile.id,
    currentVersion: profile.current_version,
    createdAt: iso(profile.created_at),
    updatedAt: iso(profile.updated_at),
    versions: versions.filter((v) => v.profile_id === profile.id).map(versionItem),
  }));
}

/** The profile versions a person wrote, in every org. */
export async function authoredVersions(db: D1Database, userId: string) {
  const rows = await all<VersionRow>(
    db,
    `SELECT ${VERSION_COLUMNS} FROM assistant_profile_versions v
     WHERE v.author_id = ? ORDER BY v.org_id, v.profile_id, v.version`,
    userId,
  );
  return rows.map(versionItem);
}

/** The org's assistant settings: its allowed models (null: never chosen) and preview profile. */
export async function orgAssistantSettings(db: D1Database, orgId: string) {
  const [models, org] = await Promise.all([
    all<{ model_id: string }>(
      db,
      "SELECT model_id FROM org_models WHERE org_id = ? ORDER BY position",
      orgId,
    ),
    all<{ preview_profile_id: string | null }>(
      db,
      "SELECT preview_profile_id FROM organizations WHERE id = ?",
      orgId,
    ),
  ]);
  return {
    allowedModels: models.length === 0 ? null : models.map((row) => row.model_id),
    previewProfileId: org[0]?.preview_profile_id ?? null,
  };
}
