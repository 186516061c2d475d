import type { StepPrices } from "@parley/billing";
import { type ChatOpening, parseSourceToolRef, withoutNameCollisions } from "@parley/shared";
import type { KeptRows } from "../agents/kept-rows.ts";
import { type BatchedRead, firstRow, runRead } from "../db/batched-read.ts";
import { agentSettings } from "../env.ts";
import { allowedFrom, modelProblem } from "./allowed.ts";
import { loadCatalogue, stepPricesFor } from "./catalogue.ts";
import type { CatalogueModel, Range } from "./catalogue-model.ts";
import { contentOf, type ProfileContent, VERSION_COLUMNS, type VersionRow } from "./profiles-db.ts";
import { builtInToolNames, END_USER_TOOLS } from "./tools.ts";

/**
 * The resolver the agents call every turn (docs/2026-12-06-assistant-profiles.md): which profile
 * version and which model a turn runs with, and the prices its calls are metered at, or a typed
 * refusal. One D1 query per turn at most (none while a `TurnResolver`'s pointer is fresh), a map
 * lookup for the catalogue, and a profile version's content read once per isolate (a version is
 * immutable, so keying by it is safe).
 *
 * Which profile: an end user's session runs its app's profile, else the project's default; a
 * member's session the project's default; the onboarding preview the project's preview profile,
 * else the org's; with none, Parley's built-in assistant (or preview). Which model: the one a
 * member named in the chat body for this turn, else the one picked for the session, else the
 * profile's. Every one must be in the catalogue, not retired, and allowed in the org (the preview:
 * a free-preview model): a turn naming another is refused, never silently moved to another model
 * (a different model is a different price and a different behaviour).
 */

export interface TurnContext {
  orgId: string;
  projectId: string;
  /** The assistant session; null for the onboarding preview. */
  sessionId: string | null;
  callerKind: "member" | "end_user";
  /** The end user's app; null for a member. */
  appId: string | null;
  audience: "assistant" | "preview";
  /** A model the member named in the chat body for this turn (validated here); absent: none. */
  requestedModel?: string | undefined;
}

/** The profile a turn runs with, as the agent uses it. */
export interface ResolvedProfile {
  /** Null: Parley's built-in assistant or preview (no profile chosen). */
  id: string | null;
  /** The version (0 for the built-in): name it in the reply's metadata. */
  version: number;
  name: string;
  /** The tenant's instructions ("" for none): pass to `buildSystemPrompt`, never alone. */
  instructions: string;
  /** Null: the provider's default. Within the turn's model's range. */
  temperature: number | null;
  topP: number | null;
  /** The reply's length: the profile's or the platform's, within the model's maximum. */
  maxOutputTokens: number;
  welcome: string | null;
  suggestions: string[];
  /**
   * The tools this turn offers (none for the preview or a model without tools; for end users only
   * the tool sources' `source:<id>:<name>`, which `sourceTools` in tools/turn-tools.ts builds).
   */
  tools: string[];
  /**
   * Search the project's documents with the person's message before the first model call
   * (knowledge/tool.ts `retrieveForTurn`); never in the onboarding preview.
   */
  knowledgeRetrieval: boolean;
}

export interface ResolvedTurn {
  profile: ResolvedProfile;
  model: CatalogueModel;
  /** Where the model came from. */
  modelSource: "request" | "session" | "profile";
  /** What prices the turn's calls: the model's row of the catalogue and the platform's markup. */
  prices: StepPrices;
}

export type TurnRefusalReason =
  | "model_unknown"
  | "model_retired"
  | "model_not_allowed"
  | "not_free_preview"
  | "end_user_model"
  | "preview_model"
  | "not_found";

/** Why a turn cannot run as asked: `code` and `message` are what the chat shows. */
export interface TurnRefusal {
  code: "invalid_request" | "not_found";
  reason: TurnRefusalReason;
  message: string;
  /** The model it is about, if any. */
  model: string | null;
}

export type Resolution = { ok: true; turn: ResolvedTurn } | { ok: false; refusal: TurnRefusal };

/** What the turn's context points at in D1 (kept by a `TurnResolver` between turns). */
interface Pointer {
  profile: { id: string; version: number } | null;
  sessionModel: string | null;
  listed: string[];
}

const POINTER_SQL = `SELECT
  (SELECT model FROM sessions WHERE id = ?3 AND project_id = ?2) AS session_model,
  (SELECT json_group_array(model_id) FROM
     (SELECT model_id FROM org_models WHERE org_id = ?1 ORDER BY position)) AS listed,
  CASE ?5
    WHEN 'preview' THEN json_array(p.preview_profile_id, o.preview_profile_id)
    WHEN 'end_user' THEN json_array(
      (SELECT profile_id FROM apps WHERE id = ?4 AND org_id = ?1 AND deleted_at IS NULL),
      p.default_profile_id)
    ELSE json_array(p.default_profile_id)
  END AS candidates,
  (SELECT json_group_object(id, current_version) FROM assistant_profiles WHERE org_id = ?1 AND id IN
     (p.default_profile_id, p.preview_profile_id, o.preview_profile_id,
      (SELECT profile_id FROM apps WHERE id = ?4 AND org_id = ?1))) AS versions
FROM projects p JOIN organizations o ON o.id = p.org_id
WHERE p.id = ?2 AND p.org_id = ?1 AND p.deleted_at IS NULL`;

function readPointer(db: D1Database, ctx: TurnContext): Promise<Pointer | null> {
  return runRead(db, pointerRead(db, ctx));
}

/** What `ctx` points at, as a read that can share a `DB.batch` (db/batched-read.ts). */
function pointerRead(db: D1Database, ctx: TurnContext): BatchedRead<Pointer | null> {
  const kind = ctx.audience === "preview" ? "preview" : ctx.callerKind;
  const statement = db
    .prepare(POINTER_SQL)
    .bind(ctx.orgId, ctx.projectId, ctx.sessionId ?? "", ctx.appId ?? "", kind);
  return {
    statements: [statement],
    read([answer]) {
      const row = firstRow<{
        session_model: string | null;
        listed: string;
        candidates: string;
        versions: string;
      }>(answer);
      if (!row) return null;
      const versions = JSON.parse(row.versions) as Record<string, number>;
      // The first candidate that still exists: a profile is never deleted while it runs somewhere,
      // so a missing one is a race with that check, and the next in line is the right answer.
      const id = (JSON.parse(row.candidates) as (string | null)[]).find(
        (candidate) => candidate !== null && versions[candidate] !== undefined,
      );
      return {
        profile: id ? { id, version: versions[id] as number } : null,
        sessionModel: ctx.callerKind === "member" ? row.session_model : null,
        listed: JSON.parse(row.listed) as string[],
      };
    },
  };
}

/** Profile versions' content, per isolate, by `<id>:<version>` (immutable). Bounded. */
const contents = new Map<string, ProfileContent>();
const MAX_CONTENTS = 512;

async function profileContent(db: D1Database, id: string, version: number) {
  const key = `${id}:${version}`;
  const known = contents.get(key);
  if (known) return known;
  const row = await db
    .prepare(
      `SELECT ${VERSION_COLUMNS} FROM assistant_profile_versions v
       WHERE v.profile_id = ? AND v.version = ?`,
    )
    .bind(id, version)
    .first<VersionRow>();
  if (!row) return null;
  const content = contentOf(row);
  if (contents.size >= MAX_CONTENTS) {
    const oldest = contents.keys().next().value;
    if (oldest !== undefined) contents.delete(oldest);
  }
  contents.set(key, content);
  return content;
}

const refusal = (
  reason: TurnRefusalReason,
  message: string,
  model: string | null,
  code: TurnRefusal["code"] = "invalid_request",
): Resolution => ({ ok: false, refusal: { code, reason, message, model } });

/**
 * The tools a turn offers: the profile's, except that the onboarding preview and a model without
 * tool calling get none, and an end user's session only those meant for everyone: knowledge, and
 * the org's tool sources' tools (`source:<id>:<name>`, docs/2026-12-06-tools.md: they act as the
 * end user, verifiably), never the project tools (they reach the project's memory and the org's
 * money, which are the members'). The prompt preview uses the same rule.
 */
export function turnTools(input: {
  audience: TurnContext["audience"];
  callerKind: TurnContext["callerKind"];
  model: CatalogueModel | undefined;
  tools: readonly string[];
}): string[] {
  const none = input.audience === "preview" || input.model?.capabilities.tools === false;
  if (none) return [];
  // A profile saved before tool names were checked may name two tools the model would see under
  // one name: the first keeps it (profile-rules.ts refuses such a profile now).
  const tools = withoutNameCollisions(input.tools);
  if (input.callerKind === "end_user") {
    return tools.filter((t) => END_USER_TOOLS.has(t) || isSourceTool(t));
  }
  return tools;
}

const isSourceTool = (name: string) => parseSourceToolRef(name) !== null;

const clamp = (value: number | null, range: Range | null): number | null =>
  value === null || range === null ? value : Math.min(range.max, Math.max(range.min, value));

/** Resolves one turn from a pointer (what the agent's cache keeps) and the catalogue. */
async function fromPointer(env: Env, ctx: TurnContext, pointer: Pointer): Promise<Resolution> {
  const settings = agentSettings(env);
  const catalogue = await loadCatalogue(env);
  const preview = ctx.audience === "preview";
  const stored = pointer.profile
    ? await profileContent(env.DB, pointer.profile.id, pointer.profile.version)
    : null;
  const content: ProfileContent = stored ?? {
    name: preview ? "Parley onboarding preview" : "Parley assistant",
    instructions: "",
    model: catalogue.defaultModel,
    temperature: null,
    topP: null,
    maxOutputTokens: null,
    welcome: null,
    suggestions: [],
    tools: preview ? [] : builtInToolNames(),
    knowledgeRetrieval: false,
  };
  let modelId = content.model;
  let modelSource: ResolvedTurn["modelSource"] = "profile";
  if (ctx.requestedModel !== undefined) {
    if (ctx.callerKind === "end_user") {
      return refusal(
        "end_user_model",
        "The assistant's model is chosen by the app, not in the chat.",
        ctx.requestedModel,
      );
    }
    if (preview) {
      return refusal(
        "preview_model",
        "The onboarding preview runs its own model; pick one in an assistant session.",
        ctx.requestedModel,
      );
    }
    modelId = ctx.requestedModel;
    modelSource = "request";
  } else if (!preview && pointer.sessionModel !== null) {
    modelId = pointer.sessionModel;
    modelSource = "session";
  }
  const model = catalogue.models.get(modelId);
  if (preview) {
    if (!model)
      return refusal("model_unknown", `${modelId} is not a model of the catalogue`, modelId);
    if (model.retired || !model.freePreview) {
      return refusal(
        "not_free_preview",
        `The onboarding preview's model ${modelId} is not available for the preview; an owner or admin can choose another preview profile.`,
        modelId,
      );
    }
  } else {
    const problem = modelProblem(catalogue, allowedFrom(catalogue, pointer.listed), modelId);
    if (problem || !model) {
      const reason: TurnRefusalReason = !model
        ? "model_unknown"
        : model.retired
          ? "model_retired"
          : "model_not_allowed";
      const fix =
        modelSource === "profile"
          ? " An owner or admin can choose another model for this assistant."
          : " Pick another model.";
      return refusal(reason, `${problem ?? `${modelId} is not available`}.${fix}`, modelId);
    }
  }
  const limit = preview ? settings.preview.maxOutputTokens : settings.assistant.maxOutputTokens;
  return {
    ok: true,
    turn: {
      profile: {
        id: stored && pointer.profile ? pointer.profile.id : null,
        version: stored && pointer.profile ? pointer.profile.version : 0,
        name: content.name,
        instructions: content.instructions,
        // A profile's values were checked against its own model; another model's range wins.
        temperature: clamp(content.temperature, model.temperature),
        topP: clamp(content.topP, model.topP),
        maxOutputTokens: Math.min(content.maxOutputTokens ?? limit, model.maxOutputTokens),
        welcome: content.welcome,
        suggestions: content.suggestions,
        tools: turnTools({ ...ctx, model, tools: content.tools }),
        knowledgeRetrieval: content.knowledgeRetrieval && !preview,
      },
      model,
      modelSource,
      prices: stepPricesFor(model, settings.prices.markupBps),
    },
  };
}

const missing = (): Resolution =>
  refusal("not_found", "This project no longer exists.", null, "not_found");

/** Resolves one turn, reading what it points at from D1 (no cache but the catalogue's). */
export async function resolveTurn(env: Env, ctx: TurnContext): Promise<Resolution> {
  const pointer = await readPointer(env.DB, ctx);
  return pointer ? fromPointer(env, ctx, pointer) : missing();
}

/**
 * How an empty chat opens (the welcome and suggested prompts) for the profile a turn in this
 * context would run: the same choice as `resolveTurn` (for an end user their app's profile, else
 * the project's default), read the same way, and only those two fields of it: the embed shows
 * them to people who must never see the instructions or the model. Without a profile: null and
 * none (Parley's own words). Null for a project the org does not hold (or no longer).
 */
export async function resolveOpening(
  env: Env,
  ctx: Pick<TurnContext, "orgId" | "projectId" | "callerKind" | "appId">,
): Promise<ChatOpening | null> {
  const pointer = await readPointer(env.DB, { ...ctx, sessionId: null, audience: "assistant" });
  if (!pointer) return null;
  const content = pointer.profile
    ? await profileContent(env.DB, pointer.profile.id, pointer.profile.version)
    : null;
  return { welcome: content?.welcome ?? null, suggestions: content?.suggestions ?? [] };
}

/**
 * A resolver an agent keeps (one per Durable Object): it remembers what each context pointed at
 * for `maxAgeMs` (pass the agent's `authzCacheMs`), so a steady turn reads no D1. Call `forget()`
 * from the agent's `forgetAccess()`: every change of a profile, an assignment, an org's models or
 * a session's model pushes the affected agents (assistants/push.ts), and `maxAgeMs` bounds a push
 * that was lost.
 */
export class TurnResolver {
  readonly #env: Env;
  readonly #maxAgeMs: number;
  readonly #pointers = new Map<string, { at: number; pointer: Pointer }>();
  /** Where the pointers are kept across hibernation (agents/kept-rows.ts); else in memory only. */
  readonly #rows: KeptRows | null;

  constructor(env: Env, options: { maxAgeMs?: number; kept?: KeptRows } = {}) {
    this.#env = env;
    this.#maxAgeMs = options.maxAgeMs ?? agentSettings(env).authzCacheMs;
    this.#rows = options.kept ?? null;
  }

  /** What `key` pointed at when last read: in memory, or as kept before a hibernation. */
  #kept(key: string): { at: number; pointer: Pointer } | undefined {
    const kept = this.#pointers.get(key);
    if (kept !== undefined || this.#rows === null) return kept;
    const stored = this.#rows.get<Pointer>(`${ROW_PREFIX}${key}`);
    if (stored === null) return undefined;
    const loaded = { at: stored.at, pointer: stored.value };
    this.#pointers.set(key, loaded);
    return loaded;
  }

  #keep(key: string, pointer: Pointer | null): void {
    if (pointer === null) {
      this.#pointers.delete(key);
      this.#rows?.delete(`${ROW_PREFIX}${key}`);
      return;
    }
    const at = Date.now();
    this.#pointers.set(key, { at, pointer });
    this.#rows?.put(`${ROW_PREFIX}${key}`, at, pointer);
  }

  async resolve(ctx: TurnContext): Promise<Resolution> {
    const key = pointerKey(ctx);
    const kept = this.#kept(key);
    if (kept && Date.now() - kept.at < this.#maxAgeMs) {
      return fromPointer(this.#env, ctx, kept.pointer);
    }
    const pointer = await readPointer(this.#env.DB, ctx);
    this.#keep(key, pointer);
    return pointer ? fromPointer(this.#env, ctx, pointer) : missing();
  }

  /**
   * Reads what `ctx` points at now and keeps it, with the catalogue and the profile version's
   * content warm: the agent calls it off any turn's path (a new socket, a push's re-check), so the
   * next turn resolves without a D1 read.
   */
  async refresh(ctx: TurnContext): Promise<void> {
    await runRead(this.#env.DB, this.refreshing(ctx));
  }

  /**
   * `refresh` as a read that can share a `DB.batch` with others (the connect's checks, one round
   * trip: agents/connections.ts).
   */
  refreshing(ctx: TurnContext): BatchedRead<void> {
    const key = pointerKey(ctx);
    this.#keep(key, null);
    const read = pointerRead(this.#env.DB, ctx);
    return {
      statements: read.statements,
      read: async (answers) => {
        const pointer = await read.read(answers);
        this.#keep(key, pointer);
        if (!pointer) return;
        // The catalogue and the profile version's content warm, as a turn would find them.
        await fromPointer(this.#env, { ...ctx, requestedModel: undefined }, pointer);
      },
    };
  }

  /** Drops what was kept: the next turn reads D1 again. */
  forget(): void {
    this.#pointers.clear();
    this.#rows?.deleteAll(ROW_PREFIX);
  }
}

/** Kept pointers' keys in `parley_kept` start with this. */
const ROW_PREFIX = "pointer:";

/** What a kept pointer is keyed by: everything of the context but a model named for one turn. */
const pointerKey = (ctx: TurnContext) =>
  JSON.stringify([
    ctx.orgId,
    ctx.projectId,
    ctx.sessionId,
    ctx.callerKind,
    ctx.appId,
    ctx.audience,
  ]);
