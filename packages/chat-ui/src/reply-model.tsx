/**
 * Which model and which assistant profile version a reply ran with, as the agents write them in
 * its metadata (issue 29: `model` and `profile`). Read defensively, like the rest of the
 * metadata: replies written before the agents named them, or by an older server, carry neither,
 * and the footer then shows nothing of them.
 */

/** The model and profile version of one reply; each part only when the metadata names it. */
export interface ReplyModelMeta {
  model?: { id: string; name: string };
  profile?: { id: string | null; version: number; name?: string };
}

const record = (value: unknown): Record<string, unknown> | null =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;

/** A short, printable string (a name shown to a person), or undefined. */
const text = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" && value.length <= 200
    ? value.trim()
    : undefined;

/**
 * Reads `model` (an id, or `{ id, displayName | name | label }`, with `modelLabel` or
 * `modelDisplayName` beside an id) and `profile` (`{ id, version, name? }`; version 0 is Parley's
 * built-in assistant). The display name falls back to the id: the person still learns which
 * model answered.
 */
export function readReplyModel(metadata: unknown): ReplyModelMeta {
  const meta = record(metadata);
  if (!meta) return {};
  const result: ReplyModelMeta = {};
  const model = record(meta.model);
  const id = model ? text(model.id) : text(meta.model);
  if (id !== undefined) {
    const name =
      (model && (text(model.displayName) ?? text(model.name) ?? text(model.label))) ??
      text(meta.modelLabel) ??
      text(meta.modelDisplayName) ??
      id;
    result.model = { id, name };
  }
  const profile = record(meta.profile);
  const version = profile?.version;
  if (profile && typeof version === "number" && Number.isSafeInteger(version) && version >= 0) {
    const name = text(profile.name);
    result.profile = {
      id: text(profile.id) ?? null,
      version,
      ...(name === undefined ? {} : { name }),
    };
  }
  return result;
}

/** "Support bot v3", "Profile v3", or "Built-in assistant" for version 0 (no profile). */
export function profileWords(profile: NonNullable<ReplyModelMeta["profile"]>): string {
  if (profile.id === null || profile.version === 0) return profile.name ?? "Built-in assistant";
  return `${profile.name ?? "Profile"} v${profile.version}`;
}

/**
 * The reply's model by its display name (its id on hover) and the profile version it followed,
 * in the footer's small print. Nothing when the metadata names neither.
 */
export function ReplyModel({ metadata }: { metadata: unknown }) {
  const { model, profile } = readReplyModel(metadata);
  if (!model && !profile) return null;
  return (
    <span className="inline-flex min-w-0 flex-wrap items-center gap-x-1.5 text-muted-foreground text-xs">
      {model ? (
        <span title={model.id === model.name ? undefined : model.id} className="font-medium">
          <span className="sr-only">Model: </span>
          {model.name}
        </span>
      ) : null}
      {model && profile ? <span aria-hidden="true">·</span> : null}
      {profile ? (
        <span>
          <span className="sr-only">Assistant profile: </span>
          {profileWords(profile)}
        </span>
      ) : null}
    </span>
  );
}
