import { useNavigate, useRouterState } from "@tanstack/react-router";
import { Page } from "../components/page.tsx";
import { Tabs, TabsContent, TabsList, TabsTrigger } from "../components/ui/tabs.tsx";
import { AllowedModels } from "../features/assistants/allowed-models.tsx";
import { OrgPreviewProfile } from "../features/assistants/profile-choice.tsx";
import { NewProfileDialog, ProfileList } from "../features/assistants/profile-list.tsx";
import { useAllowedModels, useCatalogue } from "../features/assistants/use-models.ts";
import ToolSources from "../features/tools/tool-sources.tsx";
import { canManage as canManageOrg, useSession } from "../lib/session.tsx";

type Tab = "profiles" | "models" | "tools";

/**
 * The org's assistants (issue 29): its profiles (instructions, model, opening; edited on their
 * own page) with the onboarding preview's, and the models its members may use with their prices
 * per million tokens (`#models`: owners and admins choose them, members read them), and the tool
 * sources of the org's own product whose tools profiles switch on (`#tools`).
 */
export default function AssistantsPage() {
  const { org } = useSession();
  const navigate = useNavigate();
  const hash = useRouterState({ select: (state) => state.location.hash });
  const allowed = useAllowedModels(org?.id);
  const catalogue = useCatalogue();
  if (!org) return null;
  const manage = canManageOrg(org);
  const tab: Tab = hash === "models" ? "models" : hash === "tools" ? "tools" : "profiles";
  const names = [...(allowed.data?.items ?? []), ...(catalogue.data?.items ?? [])];
  return (
    <Page
      title="Assistants"
      heading={`Assistants in ${org.name}`}
      description="Shape what your assistant says and which models it runs on."
      actions={
        manage && allowed.data && tab === "profiles" ? (
          <NewProfileDialog orgId={org.id} models={allowed.data.items} />
        ) : null
      }
    >
      <Tabs
        value={tab}
        onValueChange={(next) =>
          void navigate({
            to: "/assistants",
            hash: next === "profiles" ? undefined : next,
            replace: true,
          })
        }
        className="grid gap-6"
      >
        <TabsList aria-label="Assistant sections">
          <TabsTrigger value="profiles">Profiles</TabsTrigger>
          <TabsTrigger value="models">Models</TabsTrigger>
          <TabsTrigger value="tools">Tools</TabsTrigger>
        </TabsList>
        <TabsContent value="profiles">
          <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_22rem]">
            <div className="min-w-0">
              <ProfileList orgId={org.id} canManage={manage} names={names} />
            </div>
            <div className="min-w-0">
              <OrgPreviewProfile orgId={org.id} canManage={manage} />
            </div>
          </div>
        </TabsContent>
        <TabsContent value="models">
          <AllowedModels orgId={org.id} canManage={manage} />
        </TabsContent>
        <TabsContent value="tools">
          {tab === "tools" ? <ToolSources orgId={org.id} canManage={manage} /> : null}
        </TabsContent>
      </Tabs>
    </Page>
  );
}
