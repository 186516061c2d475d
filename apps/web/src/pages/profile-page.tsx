import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate, useParams } from "@tanstack/react-router";
import { ChevronLeft, Trash2 } from "lucide-react";
import { toast } from "sonner";
import { Page } from "../components/page.tsx";
import { Button } from "../components/ui/button.tsx";
import { useConfirm } from "../components/ui/confirm.tsx";
import { ErrorNote, Loading } from "../components/ui/states.tsx";
import { ProfileEditor } from "../features/assistants/profile-editor.tsx";
import { useAllowedModels, useCatalogue } from "../features/assistants/use-models.ts";
import { assistantsApi } from "../lib/assistants-api.ts";
import { useAllProjects } from "../lib/org-lists.ts";
import { keys } from "../lib/query.ts";
import { refusalText } from "../lib/refusal.ts";
import { useResourceOrg } from "../lib/resource-org.ts";
import { canManage as canManageOrg, useSession } from "../lib/session.tsx";

const when = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short" });

const back = (
  <Link to="/assistants" className="inline-flex items-center gap-1 hover:text-foreground">
    <ChevronLeft aria-hidden="true" className="size-4" />
    All profiles
  </Link>
);

/**
 * One assistant profile: its editor, the whole prompt it gives and its history
 * (features/assistants/profile-editor.tsx). Owners and admins edit and delete; members read.
 */
export default function ProfilePage() {
  const { profileId } = useParams({ from: "/app/assistants/profiles/$profileId" });
  const { org } = useSession();
  const manage = canManageOrg(org);
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const confirm = useConfirm();
  const profile = useQuery({
    queryKey: keys.profile(profileId),
    queryFn: () => assistantsApi.profile(profileId),
  });
  const orgId = profile.data?.orgId;
  useResourceOrg(orgId);
  const allowed = useAllowedModels(orgId);
  const catalogue = useCatalogue();
  const projects = useAllProjects(orgId ?? "", orgId !== undefined);

  if (profile.isPending || (orgId && allowed.isPending)) {
    return (
      <Page title="Profile" description={back}>
        <Loading label="Loading the profile…" lines={6} />
      </Page>
    );
  }
  const failed = profile.error ?? allowed.error;
  if (failed || !profile.data || !allowed.data) {
    return (
      <Page title="Profile" description={back}>
        <ErrorNote
          error={failed}
          retry={() => {
            void profile.refetch();
            void allowed.refetch();
          }}
        />
      </Page>
    );
  }
  const data = profile.data;
  const uses =
    data.usedBy.projects.length +
    data.usedBy.previewProjects.length +
    data.usedBy.apps.length +
    (data.usedBy.orgPreview ? 1 : 0);

  async function remove() {
    if (uses > 0) {
      // The API refuses it (409) naming ids: say where it runs by name, and what to do.
      const projectName = (id: string) =>
        projects.items.find((project) => project.id === id)?.name ?? "a project";
      const where = [
        ...data.usedBy.projects.map((id) => `the project “${projectName(id)}”`),
        ...data.usedBy.previewProjects.map((id) => `the preview of “${projectName(id)}”`),
        ...data.usedBy.apps.map(() => "an app"),
        ...(data.usedBy.orgPreview ? ["the organization's onboarding preview"] : []),
      ];
      toast.error(
        `“${data.name}” runs in ${where.join(", ")}: choose another profile there first.`,
      );
      return;
    }
    const ok = await confirm({
      title: `Delete “${data.name}”?`,
      description:
        "The profile and every version of it are deleted. Chats that ran it keep their messages. This cannot be undone.",
      confirmLabel: "Delete profile",
      destructive: true,
    });
    if (!ok) return;
    try {
      await assistantsApi.deleteProfile(data.id);
      queryClient.removeQueries({ queryKey: keys.profile(data.id) });
      await queryClient.invalidateQueries({ queryKey: keys.profiles(data.orgId) });
      toast.success(`Deleted “${data.name}”.`);
      await navigate({ to: "/assistants" });
    } catch (error) {
      toast.error(refusalText(error));
    }
  }

  const names = [...allowed.data.items, ...(catalogue.data?.items ?? [])];
  return (
    <Page
      title={data.name}
      description={
        <span className="flex flex-wrap items-center gap-x-3 gap-y-1">
          {back}
          <span>
            Version {data.version} · saved by {data.updatedByLabel},{" "}
            {when.format(new Date(data.updatedAt))}
          </span>
        </span>
      }
      actions={
        manage ? (
          <Button variant="ghost" size="sm" onClick={() => void remove()}>
            <Trash2 aria-hidden="true" />
            Delete
          </Button>
        ) : null
      }
    >
      <ProfileEditor
        key={data.id}
        profile={data}
        models={allowed.data.items}
        names={names}
        projects={projects.items}
        canManage={manage}
      />
    </Page>
  );
}
