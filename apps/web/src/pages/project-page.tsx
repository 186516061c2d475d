import { formatMicros } from "@parley/chat-ui";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useParams } from "@tanstack/react-router";
import { BookOpen, ChevronLeft, MessageSquare } from "lucide-react";
import { lazy, Suspense } from "react";
import { LoadMore } from "../components/load-more.tsx";
import { Page } from "../components/page.tsx";
import { Card, CardBody, CardHeader } from "../components/ui/card.tsx";
import { EmptyState, ErrorNote, Loading } from "../components/ui/states.tsx";
import { ProjectAssistant } from "../features/assistants/profile-choice.tsx";
import { OnboardingChat } from "../features/chat/chats.tsx";
import { NewChatButton, useMyChats } from "../features/chat/new-chat.tsx";
import { MemoryEditor } from "../features/projects/memory-editor.tsx";
import { orgsApi } from "../lib/orgs-api.ts";
import { keys } from "../lib/query.ts";
import { useResourceOrg } from "../lib/resource-org.ts";
import { canManage, useSession } from "../lib/session.tsx";

/** The documents page, its own chunk, loaded here (router.tsx says why). */
const DocumentsPage = lazy(() => import("./documents-page.tsx"));
export function DocumentsRoute() {
  return (
    <Suspense
      fallback={
        <div className="mx-auto w-full max-w-6xl px-4 py-8 sm:px-6">
          <Loading label="Loading documents…" />
        </div>
      }
    >
      <DocumentsPage />
    </Suspense>
  );
}

const when = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short" });

/** The member's chats in this project, newest first, with what each has cost. */
function Sessions({ orgId, projectId }: { orgId: string; projectId: string }) {
  const { query, items, more, firstPageError } = useMyChats(orgId, projectId);
  if (query.isPending) return <Loading label="Loading chats…" />;
  if (firstPageError) {
    return <ErrorNote error={firstPageError} retry={() => void query.refetch()} />;
  }
  if (items.length === 0) {
    return (
      <EmptyState icon={<MessageSquare />} title="No chats yet.">
        Start one with New chat: the assistant knows this project's memory.
      </EmptyState>
    );
  }
  return (
    <>
      <ul className="grid divide-y divide-border">
        {items.map((session) => (
          <li key={session.id}>
            <Link
              to="/sessions/$sessionId"
              params={{ sessionId: session.id }}
              className="flex items-center justify-between gap-3 rounded-md px-2 py-2.5 hover:bg-accent"
            >
              <span className="grid min-w-0">
                <span className="truncate font-medium text-sm">
                  {session.title ?? "Untitled session"}
                </span>
                <span className="text-muted-foreground text-xs">
                  {when.format(new Date(session.lastActivityAt))}
                </span>
              </span>
              <span className="shrink-0 text-muted-foreground text-sm tabular-nums">
                {formatMicros(session.spendMicros)}
              </span>
            </Link>
          </li>
        ))}
      </ul>
      <LoadMore more={more} label="More chats" />
    </>
  );
}

/**
 * A project: its free onboarding preview chat, the member's assistant chats (one "New chat" entry
 * point, the same as in the chat's sidebar) and the project's shared memory.
 */
export default function ProjectPage() {
  const { projectId } = useParams({ from: "/app/projects/$projectId" });
  const queryClient = useQueryClient();
  const { org } = useSession();
  const project = useQuery({
    queryKey: keys.project(projectId),
    queryFn: () => orgsApi.project(projectId),
  });
  useResourceOrg(project.data?.orgId);

  if (project.isPending) {
    return (
      <Page title="Project">
        <Loading label="Loading project…" />
      </Page>
    );
  }
  if (project.isError) {
    return (
      <Page title="Project">
        <ErrorNote error={project.error} retry={() => void project.refetch()} />
      </Page>
    );
  }
  const data = project.data;
  return (
    <Page
      title={data.name}
      description={
        <Link to="/projects" className="inline-flex items-center gap-1 hover:text-foreground">
          <ChevronLeft aria-hidden="true" className="size-4" />
          All projects
        </Link>
      }
      actions={<NewChatButton projectId={projectId} />}
    >
      <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_22rem]">
        <Card aria-labelledby="preview-title" className="flex flex-col overflow-hidden">
          <CardHeader
            id="preview-title"
            title="Onboarding preview"
            description="Free turns to try the assistant with this project's memory, shared by its members."
          />
          <div className="h-[32rem] min-h-0 lg:h-[36rem]">
            <OnboardingChat
              projectId={projectId}
              newChat={<NewChatButton projectId={projectId} size="sm" />}
            />
          </div>
        </Card>
        <div className="grid content-start gap-6">
          <Card aria-labelledby="sessions-title">
            <CardHeader id="sessions-title" title="Your chats" />
            <CardBody className="pt-3">
              <Sessions orgId={data.orgId} projectId={projectId} />
            </CardBody>
          </Card>
          <ProjectAssistant project={data} canManage={canManage(org)} />
          <Card aria-labelledby="documents-title">
            <CardHeader
              id="documents-title"
              title="Documents"
              description="What the assistant searches and cites when its profile has knowledge on."
            />
            <CardBody>
              <Link
                to="/projects/$projectId/documents"
                params={{ projectId }}
                className="inline-flex items-center gap-1.5 font-medium text-sm prose-link"
              >
                <BookOpen aria-hidden="true" className="size-4" />
                Open documents
              </Link>
            </CardBody>
          </Card>
          <Card aria-labelledby="memory-title">
            <CardHeader
              id="memory-title"
              title="Project memory"
              description="What the assistant knows about this project in every chat."
            />
            <CardBody>
              <MemoryEditor
                project={data}
                onSaved={(updated) => queryClient.setQueryData(keys.project(projectId), updated)}
              />
            </CardBody>
          </Card>
        </div>
      </div>
    </Page>
  );
}
