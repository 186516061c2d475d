/**
 * Assistants the tenant shapes (issue 29, docs/2026-12-06-assistant-profiles.md): the platform's
 * model catalogue, the models an org allows, assistant profiles with their versions, and the
 * model a member picks for a session. Request schemas are strict; what the API answers is in
 * assistant-responses.ts.
 */
import { z } from "zod";
import { queryInteger } from "./pagination.ts";
import { humanText } from "./schemas.ts";
import { webUrlSchema } from "./urls.ts";

/** Where a catalogue model is served from. */
export const MODEL_PROVIDERS = ["openrouter", "openai-compatible"] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

/**
 * A model id as its provider names it (`openai/gpt-4o-mini`, `meta-llama/llama-3.1-8b:free`,
 * `parley/dev`): letters, digits and `._:/-`, starting with a letter or digit.
 */
export const modelIdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]*$/, "must be a model id such as openai/gpt-4o-mini");

/**
 * A price as OpenRouter publishes it: a plain decimal string of US dollars (per token, or per call
 * for `request`). Whether it converts exactly to micro-dollars is checked where it is converted
 * (the operator's upsert answers `invalid_request` naming the field).
 */
const publishedPrice = z
  .string()
  .max(40)
  .regex(/^\d+(\.\d+)?$/, 'must be a decimal string of US dollars, such as "0.000003"');

/** A model's prices in OpenRouter's published shape (`GET /api/v1/models`, `pricing`). */
export const openRouterPricingSchema = z.strictObject({
  prompt: publishedPrice,
  completion: publishedPrice,
  request: publishedPrice.optional(),
  internal_reasoning: publishedPrice.optional(),
  input_cache_read: publishedPrice.optional(),
  input_cache_write: publishedPrice.optional(),
});

/**
 * The NAME of the Worker secret holding an OpenAI-compatible endpoint's key, never the key. It
 * must end in `_API_KEY`: an operator's typo cannot send one of Parley's own secrets
 * (`JWT_PRIVATE_KEY`, `STRIPE_SECRET_KEY`, ...) to a model endpoint as a bearer token.
 */
export const apiKeySecretNameSchema = z
  .string()
  .max(64)
  .regex(/^[A-Z][A-Z0-9_]*_API_KEY$/, "must be the name of a secret ending in _API_KEY");

const range = (min: number, max: number) =>
  z
    .strictObject({ min: z.number().min(min).max(max), max: z.number().min(min).max(max) })
    .refine((value) => value.min <= value.max, { message: "min must not exceed max" });

/** The widest sampling ranges a profile may ask for (a model may limit them further). */
export const TEMPERATURE_RANGE = { min: 0, max: 2 } as const;
export const TOP_P_RANGE = { min: 0, max: 1 } as const;

/** One entry of the platform's model catalogue, as the operator writes it (an upsert by `id`). */
export const catalogueEntrySchema = z
  .strictObject({
    id: modelIdSchema,
    provider: z.discriminatedUnion("type", [
      /** OpenRouter (or the dev model offline): the platform's MODEL_BASE_URL and key. */
      z.strictObject({ type: z.literal("openrouter") }),
      z.strictObject({
        type: z.literal("openai-compatible"),
        /** Null: the platform's MODEL_BASE_URL (the dev model offline). */
        baseUrl: webUrlSchema(500, "must be an http:// or https:// URL").nullable(),
        /** Null: the endpoint takes no key. */
        apiKeySecret: apiKeySecretNameSchema.nullable(),
      }),
    ]),
    displayName: humanText({ min: 1, max: 100 }),
    contextWindow: z.number().int().min(1).max(100_000_000),
    maxOutputTokens: z.number().int().min(1).max(10_000_000),
    capabilities: z.strictObject({ tools: z.boolean(), reasoning: z.boolean() }),
    /** May the free onboarding preview use it (the platform pays for the preview). */
    freePreview: z.boolean().default(false),
    /** The temperatures the model takes, when it limits them; null: 0 to 2. */
    temperature: range(TEMPERATURE_RANGE.min, TEMPERATURE_RANGE.max).nullable().default(null),
    /** The top-p values the model takes, when it limits them; null: 0 to 1. */
    topP: range(TOP_P_RANGE.min, TOP_P_RANGE.max).nullable().default(null),
    pricing: openRouterPricingSchema,
    /** A retired model cannot be newly chosen; absent: live for a new entry, unchanged otherwise. */
    retired: z.boolean().optional(),
  })
  .refine((value) => value.maxOutputTokens <= value.contextWindow, {
    message: "must not exceed contextWindow",
    path: ["maxOutputTokens"],
  });
export type CatalogueEntryInput = z.input<typeof catalogueEntrySchema>;
export type CatalogueEntry = z.output<typeof catalogueEntrySchema>;

/** `POST /api/operator/models/retire`: the model to retire. */
export const retireModelSchema = z.strictObject({ id: modelIdSchema });

/**
 * `PUT /api/orgs/:orgId/models`: the models the org's members may use (each once), or null to go
 * back to the platform's default set (docs/2026-12-06-assistant-profiles.md).
 */
export const allowedModelsSchema = z.strictObject({
  models: z
    .array(modelIdSchema)
    .min(1, "allow at least one model, or send null for the platform's default")
    .max(100)
    .refine((ids) => new Set(ids).size === ids.length, { message: "must not name a model twice" })
    .nullable(),
});
export type AllowedModelsInput = z.infer<typeof allowedModelsSchema>;

/** Largest tenant instructions (a profile's system prompt), in bytes of UTF-8. */
export const MAX_INSTRUCTIONS_BYTES = 16 * 1024;

const LONE_SURROGATE = /\p{Cs}/u;
const REPLACEMENT_CHARACTER = /\uFFFD/u;
// Every control character but the tab and the line feed: a carriage return too (send \n line
// breaks), NUL, escapes, DEL and the C1 range; and the Unicode line and paragraph separators.
const INSTRUCTION_CONTROL = /(?![\t\n])[\p{Cc}\u2028\u2029]/u;
// Embeddings, overrides and isolates reorder text: the instructions a reviewer reads in the
// editor or a diff would not be the ones the model gets.
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/u;

/** Why text is not clean instructions, or null. Lengths are checked after NFC normalization. */
export function instructionsProblem(value: string): string | null {
  if (LONE_SURROGATE.test(value))
    return "must be valid Unicode text (it has an unpaired surrogate)";
  if (REPLACEMENT_CHARACTER.test(value)) {
    return "must be valid UTF-8 text (it has U+FFFD, what bytes that are not UTF-8 decode to)";
  }
  const control = INSTRUCTION_CONTROL.exec(value);
  if (control) {
    const code = (control[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
    return `must not contain control characters other than tab and line feed (found U+${code})`;
  }
  if (BIDI_CONTROL.test(value)) {
    return "must not contain bidirectional embedding, override or isolate characters (U+202A-U+202E, U+2066-U+2069)";
  }
  return null;
}

export const utf8Bytes = (text: string) => new TextEncoder().encode(text).byteLength;

/**
 * A profile's instructions: refused when they hold control characters other than tab and line
 * feed, unpaired surrogates, U+FFFD or bidi embeddings; then normalized to NFC (the same text
 * typed on two keyboards is one string) and trailing whitespace trimmed; at most
 * {@link MAX_INSTRUCTIONS_BYTES} bytes of UTF-8 after that. Empty is allowed: no instructions.
 */
export const instructionsSchema = z
  .string()
  .superRefine((value, ctx) => {
    const problem = instructionsProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .transform((value) => value.normalize("NFC").trimEnd())
  .refine((value) => utf8Bytes(value) <= MAX_INSTRUCTIONS_BYTES, {
    message: `must be at most ${MAX_INSTRUCTIONS_BYTES} bytes of UTF-8`,
  });

/**
 * A tool's name as the model sees it (`read_project_memory`). Which names exist is the tool
 * registry's to say (the worker checks each against it: later issues add knowledge and tool
 * sources per org), so the schema takes any well-formed name.
 */
export const toolNameSchema = z
  .string()
  .min(1)
  .max(120)
  .regex(
    /^(?:[a-z][a-z0-9_]{0,63}|source:tsrc_[0-9a-z]{26}:[A-Za-z0-9_.-]{1,64})$/,
    "must be a tool name such as read_project_memory, or source:<sourceId>:<tool> for a tool source's",
  );

/** The built-in tools of the assistant, by name, for a member's session (end users get none). */
export const BUILT_IN_TOOLS = [
  { name: "read_project_memory", description: "Read the project's shared memory" },
  {
    name: "update_project_memory",
    description: "Propose changes to the project's shared memory (the member approves each one)",
  },
  { name: "get_balance", description: "Look up the organization's credit balance" },
  { name: "get_session_spend", description: "Look up what this session has cost so far" },
] as const;
export type BuiltInToolName = (typeof BUILT_IN_TOOLS)[number]["name"];

/** The knowledge search's name (the worker's knowledge/tool.ts builds it; any audience). */
export const SEARCH_KNOWLEDGE_TOOL = "search_knowledge";

/** At most six suggested prompts. */
export const MAX_SUGGESTIONS = 6;

const profileFields = {
  name: humanText({ min: 1, max: 100 }),
  instructions: instructionsSchema,
  /** A model of the org's allowed list (checked by the route: 400 otherwise). */
  model: modelIdSchema,
  /** Null: the provider's default. Within the model's range. */
  temperature: z.number().min(TEMPERATURE_RANGE.min).max(TEMPERATURE_RANGE.max).nullable(),
  /** Null: the provider's default. Within the model's range. */
  topP: z.number().min(TOP_P_RANGE.min).max(TOP_P_RANGE.max).nullable(),
  /** Null: the platform's reply length, within the model's maximum. */
  maxOutputTokens: z.number().int().min(1).max(10_000_000).nullable(),
  /** What the chat shows before the first message; null: nothing. */
  welcome: humanText({ min: 1, max: 1000, multiline: true }).nullable(),
  suggestions: z.array(humanText({ min: 1, max: 200 })).max(MAX_SUGGESTIONS),
  /**
   * Retrieval before a turn's first model call: the project's documents are searched with the
   * person's message and the passages framed into the prompt (issue 31). Default false.
   */
  knowledgeRetrieval: z.boolean(),
  tools: z
    .array(toolNameSchema)
    .max(64)
    .refine((names) => new Set(names).size === names.length, {
      message: "must not name a tool twice",
    }),
};

/**
 * `POST /api/orgs/:orgId/profiles`. Absent fields take their defaults: no instructions, the
 * platform's default model, provider sampling, no welcome or suggestions, every built-in tool.
 */
export const createProfileSchema = z.strictObject({
  name: profileFields.name,
  instructions: profileFields.instructions.optional(),
  model: profileFields.model.optional(),
  temperature: profileFields.temperature.optional(),
  topP: profileFields.topP.optional(),
  maxOutputTokens: profileFields.maxOutputTokens.optional(),
  welcome: profileFields.welcome.optional(),
  suggestions: profileFields.suggestions.optional(),
  tools: profileFields.tools.optional(),
  knowledgeRetrieval: profileFields.knowledgeRetrieval.optional(),
});
export type CreateProfile = z.infer<typeof createProfileSchema>;

/**
 * `PATCH /api/profiles/:profileId`: any field; the result is a new version. `baseVersion`, when
 * given, must be the current version (an editor's guard against overwriting someone's change:
 * 409 otherwise).
 */
export const updateProfileSchema = z
  .strictObject({
    name: profileFields.name.optional(),
    instructions: profileFields.instructions.optional(),
    model: profileFields.model.optional(),
    temperature: profileFields.temperature.optional(),
    topP: profileFields.topP.optional(),
    maxOutputTokens: profileFields.maxOutputTokens.optional(),
    welcome: profileFields.welcome.optional(),
    suggestions: profileFields.suggestions.optional(),
    tools: profileFields.tools.optional(),
    knowledgeRetrieval: profileFields.knowledgeRetrieval.optional(),
    baseVersion: z.number().int().min(1).optional(),
  })
  .refine(
    (value) => Object.entries(value).some(([key, v]) => key !== "baseVersion" && v !== undefined),
    { message: "at least one field to change is required" },
  );
export type UpdateProfile = z.infer<typeof updateProfileSchema>;

/** `POST /api/profiles/:profileId/rollback`: the version to make current again (as a new one). */
export const rollbackProfileSchema = z.strictObject({ version: z.number().int().min(1) });

/** `PUT /api/orgs/:orgId/preview-profile`: the org's onboarding preview profile, or none. */
export const previewProfileSchema = z.strictObject({
  profileId: z.string().min(1).max(100).nullable(),
});

/** Who a prompt preview is for: a member's session, an end user's, or the onboarding preview. */
export const PROMPT_AUDIENCES = ["member", "end_user", "preview"] as const;
export type PromptAudience = (typeof PROMPT_AUDIENCES)[number];

/** `GET /api/profiles/:profileId/prompt-preview?projectId=&audience=&version=`. */
export const promptPreviewQuerySchema = z.strictObject({
  projectId: z.string().min(1).max(100),
  audience: z.enum(PROMPT_AUDIENCES).default("member"),
  // Digits only, like every query integer (`z.coerce` read "0x10" as 16), its rule in its message.
  version: queryInteger(1, Number.MAX_SAFE_INTEGER).optional(),
});
