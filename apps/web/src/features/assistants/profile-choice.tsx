import type { AssistantProfile, CatalogueModel, Project } from "@parley/shared";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useEffect, useId, useState } from "react";
import { toast } from "sonner";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { Select } from "../../components/ui/input.tsx";
import { ErrorNote, Loading } from "../../components/ui/states.tsx";
import { assistantsApi } from "../../lib/assistants-api.ts";
import { keys } from "../../lib/query.ts";
import { refusalText } from "../../lib/refusal.ts";
import { usePaged } from "../../lib/use-paged.ts";
import { modelName } from "./model-words.ts";
import { useCatalogue } from "./use-models.ts";

const NONE = "";

/** The org's profiles, every page (an org has a handful; the pickers list them all). */
function useProfiles(orgId: string) {
  const paged = usePaged(keys.profiles(orgId), (cursor) => assistantsApi.profiles(orgId, cursor));
  const { hasNextPage, isFetchingNextPage, isFetchNextPageError, fetchNextPage } = paged.query;
  const more = hasNextPage && !isFetchingNextPage && !isFetchNextPageError;
  useEffect(() => {
    if (more) void fetchNextPage();
  }, [more, fetchNextPage]);
  return paged;
}

/** Whether a profile may run a preview: its model must be free-preview (Parley pays for it). */
const previewable = (profile: AssistantProfile, catalogue: readonly CatalogueModel[] | undefined) =>
  catalogue?.find((model) => model.id === profile.model)?.freePreview === true;

/** A select of profiles, saving on change; `freeOnly` disables profiles a preview cannot run. */
function ProfileSelect({
  label,
  hint,
  value,
  none,
  profiles,
  catalogue,
  freeOnly,
  canManage,
  onSave,
}: {
  label: string;
  hint: string;
  value: string | null;
  none: string;
  profiles: readonly AssistantProfile[];
  catalogue: readonly CatalogueModel[] | undefined;
  freeOnly?: boolean;
  canManage: boolean;
  onSave: (profileId: string | null) => Promise<void>;
}) {
  const id = useId();
  const [busy, setBusy] = useState(false);
  const current = profiles.find((profile) => profile.id === value);
  return (
    <div className="grid gap-1.5">
      <label htmlFor={id} className="font-medium text-sm">
        {label}
      </label>
      {canManage ? (
        <Select
          id={id}
          value={value ?? NONE}
          disabled={busy}
          aria-describedby={`${id}-hint`}
          // A narrow column cuts the chosen "name · model" (a native select cannot wrap): the
          // whole of it on hover, and the model in words in the hint below.
          title={current ? `${current.name} · ${modelName(catalogue, current.model)}` : none}
          onChange={async (event) => {
            setBusy(true);
            try {
              await onSave(event.target.value === NONE ? null : event.target.value);
            } finally {
              setBusy(false);
            }
          }}
        >
          <option value={NONE}>{none}</option>
          {profiles.map((profile) => {
            const blocked = freeOnly === true && !previewable(profile, catalogue);
            return (
              <option key={profile.id} value={profile.id} disabled={blocked}>
                {profile.name} · {modelName(catalogue, profile.model)}
                {blocked ? " (not a free-preview model)" : ""}
              </option>
            );
          })}
        </Select>
      ) : (
        <p id={id} className="text-sm">
          {current ? (
            <Link
              to="/assistants/profiles/$profileId"
              params={{ profileId: current.id }}
              className="prose-link"
            >
              {current.name}
            </Link>
          ) : (
            none
          )}
        </p>
      )}
      <p id={`${id}-hint`} className="text-muted-foreground text-xs">
        {hint}
        {canManage && current ? (
          <>
            {" "}
            Runs {modelName(catalogue, current.model)}.{" "}
            <Link
              to="/assistants/profiles/$profileId"
              params={{ profileId: current.id }}
              className="prose-link"
            >
              Edit “{current.name}”
            </Link>
          </>
        ) : null}
      </p>
    </div>
  );
}

/**
 * A project's assistant: the profile its chats run (members' and an app's end users', unless the
 * app picks its own) and the one its onboarding preview runs (a free-preview model only). Owners
 * and admins choose; members see which.
 */
export function ProjectAssistant({ project, canManage }: { project: Project; canManage: boolean }) {
  const id = useId();
  const queryClient = useQueryClient();
  const profiles = useProfiles(project.orgId);
  const catalogue = useCatalogue();
  const orgPreview = useQuery({
    queryKey: keys.previewProfile(project.orgId),
    queryFn: () => assistantsApi.previewProfile(project.orgId),
  });
  const save = (input: { defaultProfileId?: string | null; previewProfileId?: string | null }) =>
    assistantsApi.setProjectProfiles(project.id, input).then(
      (updated) => {
        queryClient.setQueryData(keys.project(project.id), updated);
        void queryClient.invalidateQueries({ queryKey: keys.profiles(project.orgId) });
        toast.success("Assistant saved: the next reply follows it.");
      },
      (error) => {
        toast.error(refusalText(error));
      },
    );
  const orgPreviewName = profiles.items.find(
    (profile) => profile.id === orgPreview.data?.profileId,
  )?.name;
  return (
    <Card aria-labelledby={`${id}-title`}>
      <CardHeader
        id={`${id}-title`}
        title="Assistant"
        description="The profile this project's assistant follows: instructions, model and opening."
      />
      <CardBody className="grid gap-4">
        {profiles.query.isPending ? (
          <Loading label="Loading profiles…" lines={2} />
        ) : profiles.firstPageError ? (
          <ErrorNote error={profiles.firstPageError} retry={() => void profiles.query.refetch()} />
        ) : (
          <>
            <ProfileSelect
              label="Chats"
              hint="Members' chats, and an app's end users unless the app picks its own."
              value={project.defaultProfileId}
              none="Parley's built-in assistant"
              profiles={profiles.items}
              catalogue={catalogue.data?.items}
              canManage={canManage}
              onSave={(profileId) => save({ defaultProfileId: profileId })}
            />
            <ProfileSelect
              label="Onboarding preview"
              hint="Free turns Parley pays for: free-preview models only."
              value={project.previewProfileId}
              none={
                orgPreviewName
                  ? `The organization's preview (${orgPreviewName})`
                  : "The organization's preview"
              }
              profiles={profiles.items}
              catalogue={catalogue.data?.items}
              freeOnly
              canManage={canManage}
              onSave={(profileId) => save({ previewProfileId: profileId })}
            />
          </>
        )}
      </CardBody>
    </Card>
  );
}

/** The profile every project's onboarding preview runs unless the project names its own. */
export function OrgPreviewProfile({ orgId, canManage }: { orgId: string; canManage: boolean }) {
  const id = useId();
  const queryClient = useQueryClient();
  const profiles = useProfiles(orgId);
  const catalogue = useCatalogue();
  const preview = useQuery({
    queryKey: keys.previewProfile(orgId),
    queryFn: () => assistantsApi.previewProfile(orgId),
  });
  return (
    <Card aria-labelledby={`${id}-title`}>
      <CardHeader
        id={`${id}-title`}
        title="Onboarding preview"
        description="The free turns a new project offers. Parley pays for them, so only free-preview models run here."
      />
      <CardBody>
        {preview.isPending || profiles.query.isPending ? (
          <Loading label="Loading the preview's profile…" lines={2} />
        ) : preview.isError ? (
          <ErrorNote error={preview.error} retry={() => void preview.refetch()} />
        ) : (
          <ProfileSelect
            label="Profile of every project's preview"
            hint="A project can name its own on its page."
            value={preview.data.profileId}
            none="Parley's built-in preview"
            profiles={profiles.items}
            catalogue={catalogue.data?.items}
            freeOnly
            canManage={canManage}
            onSave={(profileId) =>
              assistantsApi.setPreviewProfile(orgId, profileId).then(
                (updated) => {
                  queryClient.setQueryData(keys.previewProfile(orgId), updated);
                  void queryClient.invalidateQueries({ queryKey: keys.profiles(orgId) });
                  toast.success("Preview profile saved.");
                },
                (error) => {
                  toast.error(refusalText(error));
                },
              )
            }
          />
        )}
      </CardBody>
    </Card>
  );
}
