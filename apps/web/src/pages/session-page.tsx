import { formatMicros, SessionSidebar, type SessionSummary } from "@parley/chat-ui";
import type { Session } from "@parley/shared";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate, useParams } from "@tanstack/react-router";
import { ChevronLeft, PanelLeft } from "lucide-react";
import { useCallback, useEffect, useRef, useState } from "react";
import { toast } from "sonner";
import { useDocumentTitle } from "../components/page.tsx";
import { Button } from "../components/ui/button.tsx";
import { useConfirm } from "../components/ui/confirm.tsx";
import { Dialog, DialogTrigger, SheetContent } from "../components/ui/dialog.tsx";
import { ErrorNote, Loading } from "../components/ui/states.tsx";
import { SessionModelPicker } from "../features/assistants/session-model-picker.tsx";
import { AssistantChat } from "../features/chat/chats.tsx";
import { useMyChats, useNewChat } from "../features/chat/new-chat.tsx";
import { SessionToolCalls } from "../features/tools/session-tool-calls.tsx";
import { api } from "../lib/api.ts";
import { keys } from "../lib/query.ts";
import { refusalText } from "../lib/refusal.ts";
import { useResourceOrg } from "../lib/resource-org.ts";

const untitled = (title: string | null) => title ?? "Untitled session";

/** The project's chats beside the open one: new, search, rename, delete (after a confirmation). */
function Sidebar({
  orgId,
  projectId,
  currentId,
  onNavigate,
  beforeDelete,
}: {
  orgId: string;
  projectId: string;
  /** Called before a chat is erased: anything that would read it again stops. */
  beforeDelete?: (id: string) => void;
  currentId: string;
  onNavigate?: () => void;
}) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const confirm = useConfirm();
  const newChat = useNewChat(projectId);
  const { items } = useMyChats(orgId, projectId);
  const sessions: SessionSummary[] = items.map((session) => ({
    id: session.id,
    title: untitled(session.title),
    updatedAt: session.lastActivityAt,
    spendMicros: session.spendMicros,
  }));
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: keys.sessions(projectId) });
  };
  return (
    <SessionSidebar
      label="Chats"
      sessions={sessions}
      currentId={currentId}
      onNew={() => {
        onNavigate?.();
        void newChat.start();
      }}
      renderLink={(session, children, linkProps) => (
        <Link
          to="/sessions/$sessionId"
          params={{ sessionId: session.id }}
          {...linkProps}
          onClick={onNavigate}
        >
          {children}
        </Link>
      )}
      onRename={async (id, title) => {
        try {
          const updated = await api.renameSession(id, title);
          queryClient.setQueryData(keys.session(id), updated);
          refresh();
        } catch (error) {
          toast.error(refusalText(error));
        }
      }}
      confirmDelete={(session) =>
        confirm({
          title: "Delete this chat?",
          description: `“${session.title}” is erased from every store. What it cost stays in the ledger. This cannot be undone.`,
          confirmLabel: "Delete chat",
          destructive: true,
        })
      }
      onDelete={async (id) => {
        beforeDelete?.(id);
        // Leave the chat before it is erased: its socket closes with the screen, so it never
        // reconnects to a chat that answers 410 (a ticket, the transcript) once the erasure ran.
        if (id === currentId) {
          await navigate({ to: "/projects/$projectId", params: { projectId } });
        }
        try {
          await api.deleteSession(id);
        } catch (error) {
          toast.error(refusalText(error));
          return;
        }
        toast.success("Chat deleted.");
        // Nothing may ask for it again: drop what is cached of it.
        await queryClient.cancelQueries({ queryKey: keys.session(id) });
        queryClient.removeQueries({ queryKey: keys.session(id) });
        refresh();
      }}
    />
  );
}

/**
 * An assistant session, full height: the project's chats on the left (a sheet on a phone), the
 * session's title and spend above the chat; the composer stays at the bottom of the screen.
 */
export default function SessionPage() {
  const { sessionId } = useParams({ from: "/app/sessions/$sessionId" });
  const queryClient = useQueryClient();
  const [menuOpen, setMenuOpen] = useState(false);
  const session = useQuery({
    queryKey: keys.session(sessionId),
    queryFn: () => api.session(sessionId),
  });
  useDocumentTitle(session.data ? untitled(session.data.title) : "Chat");
  useResourceOrg(session.data?.orgId);

  const projectId = session.data?.projectId;
  const later = useRef<number | undefined>(undefined);
  // A turn can title the session (the first one) and always adds to its spend.
  // A stopped or failed reply's cost is settled a moment after the stream ends: read it again then.
  const onTurnEnd = useCallback(() => {
    const refresh = () => {
      void queryClient.invalidateQueries({ queryKey: keys.session(sessionId) });
      if (projectId) void queryClient.invalidateQueries({ queryKey: keys.sessions(projectId) });
    };
    refresh();
    window.clearTimeout(later.current);
    later.current = window.setTimeout(refresh, 1500);
  }, [queryClient, sessionId, projectId]);
  useEffect(() => () => window.clearTimeout(later.current), []);
  // Erasing this chat: the delayed re-read of its spend must not ask for it (410) afterwards.
  const stopRefreshing = useCallback(
    (id: string) => {
      if (id === sessionId) window.clearTimeout(later.current);
    },
    [sessionId],
  );

  if (session.isError) {
    return (
      <div className="mx-auto grid w-full max-w-3xl justify-items-start gap-3 p-6">
        <ErrorNote error={session.error} />
        <Link to="/projects" className="prose-link font-medium text-sm">
          Go to your projects
        </Link>
      </div>
    );
  }
  // The chat does not wait for the session's record: its socket, ticket and transcript load in
  // parallel with it (the record gives only the title, the spend and the project's sidebar).
  const data: Session | undefined = session.data;
  return (
    <div className="flex h-[calc(100dvh-3.5rem)] min-h-0">
      <aside
        aria-label="Chats of this project"
        className="hidden w-72 shrink-0 border-border border-r bg-muted/30 md:flex md:flex-col"
      >
        {data ? (
          <Sidebar
            orgId={data.orgId}
            projectId={data.projectId}
            currentId={sessionId}
            beforeDelete={stopRefreshing}
          />
        ) : (
          <div className="p-3">
            <Loading label="Loading chats…" lines={4} />
          </div>
        )}
      </aside>
      <section aria-labelledby="session-title" className="flex min-w-0 flex-1 flex-col">
        <div className="flex h-12 shrink-0 items-center gap-2 border-border border-b px-3 sm:px-4">
          {data ? (
            <Dialog open={menuOpen} onOpenChange={setMenuOpen}>
              <DialogTrigger asChild>
                <Button variant="ghost" size="icon" className="md:hidden" aria-label="Chats">
                  <PanelLeft aria-hidden="true" />
                </Button>
              </DialogTrigger>
              <SheetContent title="Chats of this project">
                <Sidebar
                  orgId={data.orgId}
                  projectId={data.projectId}
                  currentId={sessionId}
                  beforeDelete={stopRefreshing}
                  onNavigate={() => setMenuOpen(false)}
                />
              </SheetContent>
            </Dialog>
          ) : null}
          {data ? (
            <Link
              to="/projects/$projectId"
              params={{ projectId: data.projectId }}
              className="hidden items-center gap-1 text-muted-foreground text-sm hover:text-foreground sm:flex"
            >
              <ChevronLeft aria-hidden="true" className="size-4" />
              Project
            </Link>
          ) : null}
          <h1
            id="session-title"
            tabIndex={-1}
            className="min-w-0 flex-1 truncate font-medium outline-none"
          >
            {data ? untitled(data.title) : "Loading chat…"}
          </h1>
          {data ? <SessionModelPicker session={data} /> : null}
          {data ? <SessionToolCalls sessionId={sessionId} orgId={data.orgId} /> : null}
          <p className="relative shrink-0 text-muted-foreground text-sm tabular-nums">
            <span className="hidden sm:inline">Spent so far </span>
            <span className="sr-only sm:hidden">Spent so far </span>
            {data ? formatMicros(data.spendMicros) : "…"}
          </p>
        </div>
        <div className="min-h-0 flex-1">
          <AssistantChat key={sessionId} sessionId={sessionId} onTurnEnd={onTurnEnd} />
        </div>
      </section>
    </div>
  );
}
