/**
 * What the assistant routes answer (issue 29): the model catalogue, an org's allowed models,
 * assistant profiles and their versions, the prompt preview. Beside responses.ts (which holds the
 * older resources) so neither file grows past reading; the OpenAPI document is generated from
 * both, and the conformance test validates real answers against these. The types are the
 * schemas' outputs, so they cannot drift apart.
 */
import { z } from "zod";
import { MODEL_PROVIDERS, PROMPT_AUDIENCES } from "./assistants.ts";
import { microsSchema as billingMicros } from "./billing.ts";

const iso = z
  .string()
  .meta({ description: "ISO 8601 timestamp", examples: ["2026-12-06T09:30:00.000Z"] });
const micros = billingMicros.meta({
  description: "integer micro-dollars (1 USD = 1,000,000)",
  examples: [3_000_000],
});
const range = z.strictObject({ min: z.number(), max: z.number() });

/**
 * A model's prices in integer micro-dollars per million tokens (`requestMicros` per call). On the
 * org's and members' routes they are what the org is charged (the provider's price plus the
 * platform's markup, each rounded up, for display: a call is charged its cost plus markup rounded
 * up once); on the operator's, the provider's price. Null rates fall back: cache reads and writes
 * to the prompt rate, reasoning to the completion rate.
 */
export const modelPricesSchema = z
  .strictObject({
    promptMicrosPerMTok: micros,
    completionMicrosPerMTok: micros,
    reasoningMicrosPerMTok: micros.nullable(),
    cacheReadMicrosPerMTok: micros.nullable(),
    cacheWriteMicrosPerMTok: micros.nullable(),
    requestMicros: micros.describe("per call"),
  })
  .meta({ id: "ModelPrices" });
export type ModelPrices = z.output<typeof modelPricesSchema>;

/** A catalogue model as the org's members see it (never its endpoint or key). */
export const catalogueModelSchema = z
  .strictObject({
    id: z.string().describe("The provider's model id"),
    displayName: z.string(),
    provider: z.enum(MODEL_PROVIDERS),
    contextWindow: z.number().int(),
    maxOutputTokens: z.number().int(),
    capabilities: z.strictObject({ tools: z.boolean(), reasoning: z.boolean() }),
    freePreview: z.boolean(),
    temperature: range.nullable().describe("The temperatures it takes; null: 0 to 2"),
    topP: range.nullable().describe("The top-p values it takes; null: 0 to 1"),
    prices: modelPricesSchema,
    servedLocally: z
      .boolean()
      .describe(
        "Answered by a model server on the platform's own machine: offline (`pnpm dev` without an OpenRouter key) the local dev model answers every model that has no endpoint of its own, whatever its name",
      ),
  })
  .meta({ id: "CatalogueModel" });
export type CatalogueModel = z.output<typeof catalogueModelSchema>;

export const catalogueModelListSchema = z
  .strictObject({
    items: z.array(catalogueModelSchema),
    defaultModel: z.string().describe("The platform's default model"),
  })
  .meta({ id: "CatalogueModelList" });
export type CatalogueModelList = z.output<typeof catalogueModelListSchema>;

/** `GET/PUT /api/orgs/:orgId/models`: the models the org's members may use. */
export const allowedModelListSchema = z
  .strictObject({
    orgId: z.string(),
    items: z.array(catalogueModelSchema),
    chosen: z.boolean().describe("false: the org never chose, and has the platform's default set"),
  })
  .meta({ id: "AllowedModelList" });
export type AllowedModelList = z.output<typeof allowedModelListSchema>;

const openRouterPricingOut = z.strictObject({
  prompt: z.string(),
  completion: z.string(),
  request: z.string().optional(),
  internal_reasoning: z.string().optional(),
  input_cache_read: z.string().optional(),
  input_cache_write: z.string().optional(),
});

/** A catalogue entry as the platform operator sees it: the endpoint, the key's secret name. */
export const operatorModelSchema = z
  .strictObject({
    id: z.string(),
    displayName: z.string(),
    provider: z.discriminatedUnion("type", [
      z.strictObject({ type: z.literal("openrouter") }),
      z.strictObject({
        type: z.literal("openai-compatible"),
        baseUrl: z.string().nullable(),
        apiKeySecret: z.string().nullable(),
      }),
    ]),
    contextWindow: z.number().int(),
    maxOutputTokens: z.number().int(),
    capabilities: z.strictObject({ tools: z.boolean(), reasoning: z.boolean() }),
    freePreview: z.boolean(),
    temperature: range.nullable(),
    topP: range.nullable(),
    pricing: openRouterPricingOut.describe("As published (OpenRouter's shape)"),
    costs: modelPricesSchema.describe("The provider's prices, converted exactly"),
    retired: z.boolean(),
    retiredAt: iso.nullable(),
    source: z.enum(["config", "operator"]),
    updatedAt: iso.nullable(),
    profiles: z.number().int().describe("Live profiles naming it"),
  })
  .meta({ id: "OperatorModel" });
export type OperatorModel = z.output<typeof operatorModelSchema>;

export const operatorModelListSchema = z
  .strictObject({ items: z.array(operatorModelSchema), defaultModel: z.string() })
  .meta({ id: "OperatorModelList" });
export type OperatorModelList = z.output<typeof operatorModelListSchema>;

const profileContent = {
  name: z.string(),
  instructions: z.string(),
  model: z.string(),
  temperature: z.number().nullable(),
  topP: z.number().nullable(),
  maxOutputTokens: z.number().int().nullable(),
  welcome: z.string().nullable(),
  suggestions: z.array(z.string()),
  tools: z.array(z.string()),
  knowledgeRetrieval: z
    .boolean()
    .describe("Search the project's documents with the message before the first model call"),
};

/** One immutable version of a profile: who made it and when, and what it said. */
export const profileVersionSchema = z
  .strictObject({
    profileId: z.string(),
    version: z.number().int(),
    ...profileContent,
    authorId: z.string().nullable().describe("The member's id; their pseudonym once erased"),
    authorLabel: z.string(),
    createdAt: iso,
    restoredFrom: z.number().int().nullable().describe("A rollback: the version it copies"),
  })
  .meta({ id: "ProfileVersion" });
export type ProfileVersion = z.output<typeof profileVersionSchema>;
export const profileVersionPageSchema = z
  .strictObject({ items: z.array(profileVersionSchema), nextCursor: z.string().nullable() })
  .meta({ id: "ProfileVersionPage" });
export type ProfileVersionPage = z.output<typeof profileVersionPageSchema>;

/** An assistant profile: its current version's content, and where the org uses it. */
export const assistantProfileSchema = z
  .strictObject({
    id: z.string(),
    orgId: z.string(),
    version: z.number().int().describe("The current version"),
    ...profileContent,
    createdAt: iso,
    updatedAt: iso,
    updatedBy: z.string().nullable(),
    updatedByLabel: z.string(),
    usedBy: z.strictObject({
      projects: z.array(z.string()).describe("Projects whose default profile it is"),
      previewProjects: z.array(z.string()).describe("Projects whose preview profile it is"),
      apps: z.array(z.string()),
      orgPreview: z.boolean(),
    }),
  })
  .meta({ id: "AssistantProfile" });
export type AssistantProfile = z.output<typeof assistantProfileSchema>;
export const assistantProfilePageSchema = z
  .strictObject({ items: z.array(assistantProfileSchema), nextCursor: z.string().nullable() })
  .meta({ id: "AssistantProfilePage" });
export type AssistantProfilePage = z.output<typeof assistantProfilePageSchema>;

/** The whole system prompt the model would see for a profile version in a project. */
export const promptPreviewSchema = z
  .strictObject({
    profileId: z.string(),
    version: z.number().int(),
    projectId: z.string(),
    audience: z.enum(PROMPT_AUDIENCES),
    model: z.string(),
    system: z.string(),
    tokens: z.number().int().describe("Estimated at four characters a token"),
  })
  .meta({ id: "PromptPreview" });
export type PromptPreview = z.output<typeof promptPreviewSchema>;

export const orgPreviewProfileSchema = z
  .strictObject({ orgId: z.string(), profileId: z.string().nullable() })
  .meta({ id: "OrgPreviewProfile" });
export type OrgPreviewProfile = z.output<typeof orgPreviewProfileSchema>;

/**
 * How an empty chat opens for someone who is not a member (the embed): the welcome and suggested
 * prompts of the profile their chats run, and nothing else of it (never its instructions, model or
 * sampling, which are the org's).
 */
export const chatOpeningSchema = z
  .strictObject({
    welcome: z.string().nullable().describe("The profile's welcome; null: Parley's own words"),
    suggestions: z.array(z.string()).describe("Suggested prompts; a click sends one"),
  })
  .meta({ id: "ChatOpening" });
export type ChatOpening = z.output<typeof chatOpeningSchema>;
