import { useNavigate, useRouterState } from "@tanstack/react-router";
import { BookOpen } from "lucide-react";
import { Page } from "../../components/page.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Notice } from "../../components/ui/states.tsx";
import { Tabs, TabsContent, TabsList, TabsTrigger } from "../../components/ui/tabs.tsx";
import { canManage, useSession } from "../../lib/session.tsx";
import { ApiKeys } from "./api-keys.tsx";
import { AppList } from "./app-list.tsx";

type Tab = "apps" | "keys";

/**
 * The developers' area (issue 32.1), for owners and admins: the org's apps (`/developers`) and
 * its server API keys (`#keys`), with the API reference one click away.
 */
export default function DevelopersPage() {
  const { org } = useSession();
  const navigate = useNavigate();
  const hash = useRouterState({ select: (state) => state.location.hash });
  if (!org) return null;
  const tab: Tab = hash === "keys" ? "keys" : "apps";
  return (
    <Page
      title="Developers"
      heading={`Developers in ${org.name}`}
      description="Put the assistant in your own product: apps, the embed, API keys and your end users."
      actions={
        <Button asChild>
          {/* Its own tab: the reference is a separate page, and leaving it must not lose this one. */}
          <a href="/api-reference" target="_blank" rel="noopener noreferrer">
            <BookOpen aria-hidden="true" />
            API reference
          </a>
        </Button>
      }
    >
      {canManage(org) ? (
        <Tabs
          value={tab}
          onValueChange={(next) =>
            void navigate({
              to: "/developers",
              hash: next === "apps" ? undefined : next,
              replace: true,
            })
          }
          className="grid gap-6"
        >
          <TabsList aria-label="Developer sections">
            <TabsTrigger value="apps">Apps</TabsTrigger>
            <TabsTrigger value="keys">API keys</TabsTrigger>
          </TabsList>
          <TabsContent value="apps">
            <AppList orgId={org.id} />
          </TabsContent>
          <TabsContent value="keys">
            <ApiKeys orgId={org.id} />
          </TabsContent>
        </Tabs>
      ) : (
        <Notice>Only the org's owners and admins manage apps and API keys.</Notice>
      )}
    </Page>
  );
}
