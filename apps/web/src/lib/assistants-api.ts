import type {
  AllowedModelList,
  AssistantProfile,
  AssistantProfilePage,
  CatalogueModelList,
  CreateProfile,
  OrgPreviewProfile,
  ProfileVersion,
  ProfileVersionPage,
  Project,
  PromptAudience,
  PromptPreview,
  Session,
  UpdateProfile,
} from "@parley/shared";
import { type ApiClient, api } from "./api.ts";

/**
 * The assistant routes of issue 29 (docs/2026-12-01-contract.md, "Assistants"): the model
 * catalogue, an org's allowed models, assistant profiles with their versions and the whole-prompt
 * preview, and where a profile or model is chosen (a project, the org's preview, a session). Beside
 * `api.ts` so that file keeps to the older resources; the same client (token, refresh, errors).
 */
export function createAssistantsApi(client: ApiClient) {
  const enc = encodeURIComponent;
  const cursorQuery = (cursor?: string) => (cursor ? `?cursor=${enc(cursor)}` : "");
  return {
    /** The platform's live models with what an org is charged per million tokens. */
    catalogue: () => client.call<CatalogueModelList>("GET", "/api/models"),
    /** The models the org's members may use (the chat's picker). */
    allowedModels: (orgId: string) =>
      client.call<AllowedModelList>("GET", `/api/orgs/${enc(orgId)}/models`),
    /** Owners and admins: the allowed list (`null`: back to the platform's default). */
    setAllowedModels: (orgId: string, models: string[] | null) =>
      client.call<AllowedModelList>("PUT", `/api/orgs/${enc(orgId)}/models`, { models }),
    previewProfile: (orgId: string) =>
      client.call<OrgPreviewProfile>("GET", `/api/orgs/${enc(orgId)}/preview-profile`),
    setPreviewProfile: (orgId: string, profileId: string | null) =>
      client.call<OrgPreviewProfile>("PUT", `/api/orgs/${enc(orgId)}/preview-profile`, {
        profileId,
      }),
    profiles: (orgId: string, cursor?: string) =>
      client.call<AssistantProfilePage>(
        "GET",
        `/api/orgs/${enc(orgId)}/profiles${cursorQuery(cursor)}`,
      ),
    createProfile: (orgId: string, input: CreateProfile) =>
      client.call<AssistantProfile>("POST", `/api/orgs/${enc(orgId)}/profiles`, input),
    profile: (profileId: string) =>
      client.call<AssistantProfile>("GET", `/api/profiles/${enc(profileId)}`),
    /** A new version; `baseVersion` makes a change made meanwhile by someone else a 409. */
    updateProfile: (profileId: string, input: UpdateProfile) =>
      client.call<AssistantProfile>("PATCH", `/api/profiles/${enc(profileId)}`, input),
    deleteProfile: (profileId: string) =>
      client.call<void>("DELETE", `/api/profiles/${enc(profileId)}`),
    versions: (profileId: string, cursor?: string) =>
      client.call<ProfileVersionPage>(
        "GET",
        `/api/profiles/${enc(profileId)}/versions${cursorQuery(cursor)}`,
      ),
    version: (profileId: string, version: number) =>
      client.call<ProfileVersion>("GET", `/api/profiles/${enc(profileId)}/versions/${version}`),
    /** A new version equal to `version` (the history only grows). */
    rollback: (profileId: string, version: number) =>
      client.call<AssistantProfile>("POST", `/api/profiles/${enc(profileId)}/rollback`, {
        version,
      }),
    /** The whole system prompt a saved version gives the model in a project. */
    promptPreview: (
      profileId: string,
      query: { projectId: string; audience?: PromptAudience; version?: number },
    ) => {
      const search = new URLSearchParams({ projectId: query.projectId });
      if (query.audience) search.set("audience", query.audience);
      if (query.version !== undefined) search.set("version", String(query.version));
      return client.call<PromptPreview>(
        "GET",
        `/api/profiles/${enc(profileId)}/prompt-preview?${search.toString()}`,
      );
    },
    /** Owners and admins: the project's default profile and its onboarding preview's. */
    setProjectProfiles: (
      projectId: string,
      input: { defaultProfileId?: string | null; previewProfileId?: string | null },
    ) => client.call<Project>("PATCH", `/api/projects/${enc(projectId)}`, input),
    /** The session owner's pick (`null`: back to the profile's model). */
    setSessionModel: (sessionId: string, model: string | null) =>
      client.call<Session>("PATCH", `/api/sessions/${enc(sessionId)}`, { model }),
  };
}

export type AssistantsApi = ReturnType<typeof createAssistantsApi>;

/** The app's assistants client, over the app's one API client. */
export const assistantsApi: AssistantsApi = createAssistantsApi(api);
