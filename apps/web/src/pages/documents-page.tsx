import { useQuery } from "@tanstack/react-query";
import { Link, useParams } from "@tanstack/react-router";
import { ChevronLeft } from "lucide-react";
import { Page } from "../components/page.tsx";
import { ErrorNote, Loading } from "../components/ui/states.tsx";
import { DocumentsPanel } from "../features/knowledge/documents-panel.tsx";
import { orgsApi } from "../lib/orgs-api.ts";
import { keys } from "../lib/query.ts";
import { useResourceOrg } from "../lib/resource-org.ts";
import { canManage, useSession } from "../lib/session.tsx";

/**
 * A project's documents (issue 31): what its assistant searches and cites when a profile switches
 * knowledge on. Everyone in the org reads the list; owners and admins add documents, new versions
 * and delete them. Indexing runs in the background and its progress shows here.
 */
export default function DocumentsPage() {
  const { projectId } = useParams({ from: "/app/projects/$projectId/documents" });
  const { org } = useSession();
  const project = useQuery({
    queryKey: keys.project(projectId),
    queryFn: () => orgsApi.project(projectId),
  });
  useResourceOrg(project.data?.orgId);
  const back = (
    <Link
      to="/projects/$projectId"
      params={{ projectId }}
      className="inline-flex items-center gap-1 hover:text-foreground"
    >
      <ChevronLeft aria-hidden="true" className="size-4" />
      {project.data?.name ?? "Project"}
    </Link>
  );
  return (
    <Page
      title={project.data ? `Documents · ${project.data.name}` : "Documents"}
      heading="Documents"
      description={back}
    >
      {project.isPending ? (
        <Loading label="Loading project…" />
      ) : project.isError ? (
        <ErrorNote error={project.error} retry={() => void project.refetch()} />
      ) : (
        <DocumentsPanel
          projectId={projectId}
          orgId={project.data.orgId}
          canManage={canManage(org)}
        />
      )}
    </Page>
  );
}
