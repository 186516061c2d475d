/** Test data in the API's shapes (assistant-responses.ts), for this feature's component tests. */
import type {
  AssistantProfile,
  CatalogueModel,
  ProfileVersion,
  Project,
  Session,
} from "@parley/shared";

export function catalogueModel(overrides: Partial<CatalogueModel> = {}): CatalogueModel {
  return {
    id: "parley/dev",
    displayName: "Parley Dev Model",
    provider: "openrouter",
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    capabilities: { tools: true, reasoning: true },
    freePreview: true,
    temperature: null,
    topP: null,
    prices: {
      promptMicrosPerMTok: 1_200_000,
      completionMicrosPerMTok: 2_400_000,
      reasoningMicrosPerMTok: null,
      cacheReadMicrosPerMTok: null,
      cacheWriteMicrosPerMTok: null,
      requestMicros: 0,
    },
    servedLocally: false,
    ...overrides,
  };
}

export const DEV = catalogueModel();
export const FAST = catalogueModel({
  id: "parley/dev-fast",
  displayName: "Parley Dev Fast",
  capabilities: { tools: true, reasoning: false },
  prices: {
    promptMicrosPerMTok: 120_000,
    completionMicrosPerMTok: 480_000,
    reasoningMicrosPerMTok: null,
    cacheReadMicrosPerMTok: 30_000,
    cacheWriteMicrosPerMTok: 150_000,
    requestMicros: 0,
  },
});
export const LARGE = catalogueModel({
  id: "parley/dev-large",
  displayName: "Parley Dev Large",
  contextWindow: 200_000,
  maxOutputTokens: 32_000,
  freePreview: false,
  temperature: { min: 0, max: 1 },
  prices: {
    promptMicrosPerMTok: 3_600_000,
    completionMicrosPerMTok: 18_000_000,
    reasoningMicrosPerMTok: null,
    cacheReadMicrosPerMTok: 360_000,
    cacheWriteMicrosPerMTok: 4_500_000,
    requestMicros: 0,
  },
});

export function profileOf(overrides: Partial<AssistantProfile> = {}): AssistantProfile {
  return {
    id: "apf_1",
    orgId: "org_1",
    version: 3,
    name: "Support",
    instructions: "Be kind.\nBe brief.\nAnswer in English.",
    model: "parley/dev",
    temperature: null,
    topP: null,
    maxOutputTokens: null,
    welcome: "Hi! Ask me anything.",
    suggestions: ["What can you do?"],
    tools: ["read_project_memory", "update_project_memory", "get_balance", "get_session_spend"],
    knowledgeRetrieval: false,
    createdAt: "2026-12-01T09:00:00.000Z",
    updatedAt: "2026-12-06T09:00:00.000Z",
    updatedBy: "u1",
    updatedByLabel: "Olive Owner",
    usedBy: { projects: [], previewProjects: [], apps: [], orgPreview: false },
    ...overrides,
  };
}

/** A version of `profileOf()`'s profile with its content overridden. */
export function versionOf(
  version: number,
  overrides: Partial<ProfileVersion> = {},
): ProfileVersion {
  const p = profileOf();
  return {
    profileId: p.id,
    version,
    name: p.name,
    instructions: p.instructions,
    model: p.model,
    temperature: p.temperature,
    topP: p.topP,
    maxOutputTokens: p.maxOutputTokens,
    welcome: p.welcome,
    suggestions: p.suggestions,
    tools: p.tools,
    knowledgeRetrieval: p.knowledgeRetrieval,
    authorId: "u1",
    authorLabel: p.updatedByLabel,
    createdAt: `2026-12-0${version}T09:00:00.000Z`,
    restoredFrom: null,
    ...overrides,
  };
}

export const project: Project = {
  id: "prj_1",
  orgId: "org_1",
  name: "Launch plan",
  memory: {},
  createdBy: "u1",
  createdAt: "2026-11-29T00:00:00.000Z",
  updatedAt: "2026-11-29T00:00:00.000Z",
  defaultProfileId: "apf_1",
  previewProfileId: null,
};

export function sessionOf(overrides: Partial<Session> = {}): Session {
  return {
    id: "ses_1",
    projectId: "prj_1",
    orgId: "org_1",
    ownerId: "u1",
    ownerLabel: "Olive Owner",
    title: "Pricing",
    createdAt: "2026-12-06T09:00:00.000Z",
    updatedAt: "2026-12-06T09:00:00.000Z",
    lastActivityAt: "2026-12-06T09:00:00.000Z",
    spendMicros: 0,
    model: null,
    ...overrides,
  };
}
