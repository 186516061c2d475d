import { useQuery } from "@tanstack/react-query";
import { Link, useParams } from "@tanstack/react-router";
import { ArrowLeft } from "lucide-react";
import { Page } from "../../components/page.tsx";
import { ErrorNote, Loading, Notice } from "../../components/ui/states.tsx";
import { isApiError } from "../../lib/api.ts";
import { useResourceOrg } from "../../lib/resource-org.ts";
import { canManage, useSession } from "../../lib/session.tsx";
import { AppPreview } from "./app-preview.tsx";
import { AppSettings } from "./app-settings.tsx";
import { developersApi, devKeys } from "./developers-api.ts";
import { EmbedSnippet } from "./embed-snippet.tsx";
import { EndUsers } from "./end-users.tsx";
import { VerificationCard } from "./verification-card.tsx";

/**
 * One app (`/developers/apps/:appId`): its settings, token verification and secrets, the embed
 * snippet and a live preview, and its end users.
 */
export default function AppPage() {
  const { appId } = useParams({ from: "/app/developers/apps/$appId" });
  const { me } = useSession();
  // Asked whatever the current org: the app may be another org's of the person's (a link), where
  // their role is not the current org's. The API refuses anyone but its org's owners and admins.
  const app = useQuery({
    queryKey: devKeys.app(appId),
    queryFn: () => developersApi.app(appId),
  });
  useResourceOrg(app.data?.orgId);
  const appOrg = me?.orgs.find((candidate) => candidate.id === app.data?.orgId) ?? null;
  const manage =
    !(isApiError(app.error) && app.error.code === "forbidden") && (!app.data || canManage(appOrg));
  const parleyUrl = window.location.origin;
  const back = (
    <Link to="/developers" className="prose-link inline-flex items-center gap-1 text-sm">
      <ArrowLeft aria-hidden="true" className="size-4" />
      All apps
    </Link>
  );
  return (
    <Page title={app.data?.name ?? "App"} description={back}>
      {!manage ? (
        <Notice>Only the org's owners and admins manage apps.</Notice>
      ) : app.isPending ? (
        <Loading label="Loading the app…" />
      ) : app.isError ? (
        <ErrorNote error={app.error} retry={() => void app.refetch()} />
      ) : (
        <div className="grid gap-6">
          <div className="grid gap-6 xl:grid-cols-2">
            <div className="grid min-w-0 content-start gap-6">
              <AppSettings key={app.data.updatedAt} app={app.data} />
              <VerificationCard app={app.data} />
            </div>
            <div className="grid min-w-0 content-start gap-6">
              <EmbedSnippet app={app.data} parleyUrl={parleyUrl} />
              <AppPreview app={app.data} parleyUrl={parleyUrl} />
            </div>
          </div>
          <EndUsers appId={app.data.id} />
        </div>
      )}
    </Page>
  );
}
