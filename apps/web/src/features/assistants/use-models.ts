import { useQuery } from "@tanstack/react-query";
import { assistantsApi } from "../../lib/assistants-api.ts";
import { orgsApi } from "../../lib/orgs-api.ts";
import { keys } from "../../lib/query.ts";

/** The catalogue changes when the operator edits it: a minute is fresh enough for prices. */
const MODELS_FRESH_MS = 60_000;

/** The models the org's members may use, with what the org is charged for each. */
export function useAllowedModels(orgId: string | undefined) {
  return useQuery({
    queryKey: keys.allowedModels(orgId ?? ""),
    queryFn: () => assistantsApi.allowedModels(orgId ?? ""),
    enabled: orgId !== undefined,
    staleTime: MODELS_FRESH_MS,
  });
}

/** The platform's live models and its default model. */
export function useCatalogue(enabled = true) {
  return useQuery({
    queryKey: keys.catalogue,
    queryFn: () => assistantsApi.catalogue(),
    staleTime: MODELS_FRESH_MS,
    enabled,
  });
}

/**
 * The model a project's sessions run when nobody picked one: its default profile's, or the
 * platform's default model when the project has no profile (Parley's built-in assistant).
 * `undefined` while that is being read.
 */
export function useProjectModel(projectId: string | undefined): {
  model: string | undefined;
  profileName: string | null | undefined;
} {
  const project = useQuery({
    queryKey: keys.project(projectId ?? ""),
    queryFn: () => orgsApi.project(projectId ?? ""),
    enabled: projectId !== undefined,
  });
  const profileId = project.data?.defaultProfileId ?? null;
  const profile = useQuery({
    queryKey: keys.profile(profileId ?? ""),
    queryFn: () => assistantsApi.profile(profileId ?? ""),
    enabled: profileId !== null,
  });
  const catalogue = useCatalogue(project.data !== undefined && profileId === null);
  if (!project.data) return { model: undefined, profileName: undefined };
  if (profileId === null) return { model: catalogue.data?.defaultModel, profileName: null };
  return { model: profile.data?.model, profileName: profile.data?.name };
}
