// The light entry: the chat's views and a chat client without the AI SDK (first open stays small).

import { formatMicros } from "@parley/chat-ui/format";
import {
  ChatView,
  type CitationView,
  Composer,
  isBillingRefusal,
  type OpenSource,
  SessionSidebar,
  type SessionSummary,
  useLightChat,
} from "@parley/chat-ui/light";
import {
  type ChatOpening,
  type EmbedClient,
  type EmbedError,
  type EmbedMe,
  type LimitState,
  type Session,
  unwrap,
} from "@parley/embed-core";
import type { UIMessage } from "ai";
import { List, Plus } from "lucide-react";
import { Component, type ReactNode, useCallback, useEffect, useRef, useState } from "react";
import { ActionsTaken } from "./actions-taken.tsx";
import { Opening, useOpening } from "./opening.tsx";

export interface PanelProps {
  client: EmbedClient;
  me: EmbedMe;
  projectId?: string | undefined;
  autoFocus: boolean;
  onError?: ((error: EmbedError) => void) | undefined;
}

/** How many of the end user's newest chats the list shows. */
const SESSIONS_PAGE = 30;

const toolButton =
  "inline-flex items-center gap-1 rounded-md px-2 py-1 text-muted-foreground text-xs outline-none hover:bg-accent hover:text-foreground focus-visible:ring-2 focus-visible:ring-ring";

const summary = (session: Session, showCost: boolean): SessionSummary => ({
  id: session.id,
  title: session.title ?? "New chat",
  updatedAt: session.lastActivityAt,
  ...(showCost ? { spendMicros: session.spendMicros } : {}),
});

class ChatBoundary extends Component<
  { onError?: ((error: EmbedError) => void) | undefined; children: ReactNode },
  { failed: EmbedError | null }
> {
  override state: { failed: EmbedError | null } = { failed: null };

  static getDerivedStateFromError(error: unknown): { failed: EmbedError } {
    const embed = (error as { error?: EmbedError } | null)?.error;
    return {
      failed: embed ?? { code: "internal", status: 0, message: "This chat could not be opened." },
    };
  }

  override componentDidCatch(): void {
    if (this.state.failed) this.props.onError?.(this.state.failed);
  }

  override render() {
    const { failed } = this.state;
    if (!failed) return this.props.children;
    return (
      <div className="flex h-full flex-col items-center justify-center gap-3 p-6 text-center">
        <p role="alert" className="text-destructive text-sm">
          {failed.message}
        </p>
        <button
          type="button"
          onClick={() => this.setState({ failed: null })}
          className="rounded-md border border-border px-3 py-1.5 text-sm outline-none hover:bg-accent focus-visible:ring-2 focus-visible:ring-ring"
        >
          Try again
        </button>
      </div>
    );
  }
}

const RESETS: Record<LimitState["period"], string> = {
  day: "at midnight UTC",
  week: "on Monday at 00:00 UTC",
  month: "on the 1st of the month (UTC)",
};

/**
 * The soft warning before a limit stops a reply: the most-used limit the org's warning share
 * says to warn about, with when it resets. Amounts only where the app shows cost.
 */
export function LimitNotice({ limits, showCost }: { limits: LimitState[]; showCost: boolean }) {
  const shown = limits
    .filter((limit) => limit.warning && limit.limitMicros > 0)
    .sort((a, b) => b.spentMicros / b.limitMicros - a.spentMicros / a.limitMicros)[0];
  if (!shown) return null;
  const pct = Math.min(100, Math.floor((shown.spentMicros * 100) / shown.limitMicros));
  // As the web chat's warning says it (features/billing/limit-warning.tsx): every micro-dollar.
  const dollars = (micros: number) => formatMicros(micros, { precise: true });
  const amounts = showCost
    ? ` (${dollars(shown.spentMicros)} of ${dollars(shown.limitMicros)})`
    : "";
  const what = shown.limit.startsWith("project_") ? "this assistant's" : "your";
  const adjective = { day: "daily", week: "weekly", month: "monthly" }[shown.period];
  return (
    <p
      role="status"
      data-testid="limit-warning"
      className="mb-2 rounded-md border border-border bg-muted px-3 py-2 text-xs"
    >
      You have used {pct}% of {what} {adjective} usage limit{amounts}. It resets{" "}
      {RESETS[shown.period]}.
    </p>
  );
}

const Connecting = () => (
  <p role="status" className="p-6 text-center text-muted-foreground text-sm">
    Connecting…
  </p>
);

function Connected({
  client,
  sessionId,
  showCost,
  autoFocus,
  firstMessage,
  onTurnEnd,
  approver,
  opening,
}: {
  client: EmbedClient;
  sessionId: string;
  showCost: boolean;
  autoFocus: boolean;
  /**
   * Who answered the chat's tool approvals, for the record an answer leaves: in the embed always
   * the person reading (an end user sees only their own chats), so "you", as "Actions taken"
   * says; the session's `ownerLabel` is the org's name for them ("End user: Alice").
   */
  approver: string | undefined;
  /** Typed before the chat existed: sent once, as soon as the chat is connected. */
  firstMessage: string | null;
  onTurnEnd: () => void;
  /** How the chat opens while it has no message (the profile's welcome and suggestions). */
  opening: ChatOpening | null | undefined;
}) {
  // A failed ticket or transcript throws its EmbedError into ChatBoundary.
  const connectTicket = useCallback(
    async () => unwrap(await client.connectTicket(sessionId)).ticket,
    [client, sessionId],
  );
  const loadMessages = useCallback(
    async () => unwrap(await client.messages(sessionId)) as UIMessage[],
    [client, sessionId],
  );
  const chat = useLightChat({
    agent: "assistant-agent",
    name: sessionId,
    connectTicket,
    loadMessages,
    host: client.host,
  });
  // A reply's source opens its passage (the end user's passage route: that passage only).
  const openSource: OpenSource = useCallback(
    async (citation: CitationView) => {
      const result = await client.passage(citation);
      if (!result.ok) {
        throw new Error(
          result.error.code === "gone"
            ? "This document has changed since the reply."
            : result.error.message,
        );
      }
      return result.data;
    },
    [client],
  );
  const sent = useRef(false);
  const { send, phase } = chat;
  useEffect(() => {
    if (firstMessage === null || sent.current || phase !== "ready") return;
    sent.current = true;
    send(firstMessage);
  }, [firstMessage, send, phase]);
  const wasBusy = useRef(chat.busy);
  const [turnsEnded, setTurnsEnded] = useState(0);
  useEffect(() => {
    if (wasBusy.current && !chat.busy) {
      onTurnEnd();
      setTurnsEnded((count) => count + 1);
    }
    wasBusy.current = chat.busy;
  }, [chat.busy, onTurnEnd]);
  // The limits on this chat, read on open and again as each turn ends; a failure shows nothing.
  const [limits, setLimits] = useState<LimitState[]>([]);
  useEffect(() => {
    let live = true;
    void turnsEnded;
    void client.limits(sessionId).then((result) => {
      if (live && result.ok) setLimits(result.data.limits);
    });
    return () => {
      live = false;
    };
  }, [client, sessionId, turnsEnded]);
  if (phase === "failed") throw chat.loadError;
  if (phase === "loading") return <Connecting />;
  return (
    <ChatView
      chat={chat}
      label="Assistant chat"
      regenerate
      autoFocus={autoFocus}
      showCost={showCost}
      openSource={openSource}
      emptyState={(send) => <Opening opening={opening} send={send} />}
      approver={approver}
      renderStatus={() => (
        <>
          <ActionsTaken
            client={client}
            sessionId={sessionId}
            turnsEnded={turnsEnded}
            showCost={showCost}
          />
          <LimitNotice limits={limits} showCost={showCost} />
        </>
      )}
      // A message the assistant's limits refused: one notice (the server's words, with the reset),
      // in place of the warning; the message is back in the box.
      renderRefusal={(refusal) =>
        isBillingRefusal(refusal) ? (
          <p
            role="alert"
            data-testid="limit-stop"
            className="mb-2 rounded-md border border-destructive/50 bg-destructive/5 px-3 py-2 text-xs"
          >
            {refusal.message}
          </p>
        ) : null
      }
    />
  );
}

/**
 * The panel's content, loaded on first open: the end user's chats (a compact list behind
 * "Chats", New chat, rename) and the current chat. It opens on the newest chat; with none, a
 * message box whose first message creates the chat, so looking costs nobody a session.
 */
export default function Panel({ client, me, projectId, autoFocus, onError }: PanelProps) {
  const showCost = me.app.showCost;
  const [sessions, setSessions] = useState<Session[] | null>(null);
  // Where the list goes on past the newest page: "Older chats" reads the next one.
  const [older, setOlder] = useState<string | null>(null);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [currentId, setCurrentId] = useState<string | null>(null);
  const [listing, setListing] = useState(false);
  const [firstMessage, setFirstMessage] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [problem, setProblem] = useState<EmbedError | null>(null);
  const errorRef = useRef(onError);
  errorRef.current = onError;

  const report = useCallback((error: EmbedError) => {
    setProblem(error);
    errorRef.current?.(error);
  }, []);

  const reload = useCallback(
    async (pick: boolean) => {
      const result = await client.sessions({ limit: SESSIONS_PAGE });
      if (!result.ok) {
        report(result.error);
        return;
      }
      setSessions(result.data.items);
      setOlder(result.data.nextCursor);
      if (pick) setCurrentId((id) => id ?? result.data.items[0]?.id ?? null);
    },
    [client, report],
  );

  const loadOlder = async () => {
    if (older === null || loadingOlder) return;
    setLoadingOlder(true);
    const result = await client.sessions({ limit: SESSIONS_PAGE, cursor: older });
    setLoadingOlder(false);
    if (!result.ok) {
      report(result.error);
      return;
    }
    setSessions((list) => {
      const known = new Set((list ?? []).map((s) => s.id));
      return [...(list ?? []), ...result.data.items.filter((s) => !known.has(s.id))];
    });
    setOlder(result.data.nextCursor);
  };

  useEffect(() => {
    void reload(true);
  }, [reload]);

  const start = async (text: string | null) => {
    if (creating) return;
    setCreating(true);
    setProblem(null);
    const result = await client.createSession(projectId === undefined ? {} : { projectId });
    setCreating(false);
    if (!result.ok) {
      report(result.error);
      return;
    }
    setSessions((list) => [result.data, ...(list ?? [])]);
    setFirstMessage(text);
    setCurrentId(result.data.id);
    setListing(false);
  };

  const rename = async (id: string, title: string) => {
    const result = await client.renameSession(id, title);
    if (!result.ok) {
      report(result.error);
      return;
    }
    setSessions((list) => list?.map((s) => (s.id === id ? result.data : s)) ?? null);
  };

  const onTurnEnd = useCallback(() => void reload(false), [reload]);
  // The project of the chat shown (a new chat's: the page's, else the app's first), whose profile's
  // welcome and suggestions open it.
  const current = sessions?.find((s) => s.id === currentId);
  const opening = useOpening(client, current?.projectId ?? projectId ?? me.app.projects[0]?.id);

  if (sessions === null) {
    return problem ? (
      <p role="alert" className="p-6 text-center text-destructive text-sm">
        {problem.message}
      </p>
    ) : (
      <p role="status" className="p-6 text-center text-muted-foreground text-sm">
        Loading…
      </p>
    );
  }

  return (
    <div className="flex h-full min-h-0 flex-col">
      <div className="flex shrink-0 items-center gap-1 border-border border-b px-2 py-1">
        <button
          type="button"
          aria-pressed={listing}
          onClick={() => setListing((shown) => !shown)}
          className={toolButton}
        >
          <List aria-hidden="true" className="size-3.5" />
          Chats
        </button>
        <button
          type="button"
          onClick={() => {
            // A new chat is made when its first message is sent, not when the box is shown.
            setCurrentId(null);
            setFirstMessage(null);
            setListing(false);
          }}
          className={toolButton}
        >
          <Plus aria-hidden="true" className="size-3.5" />
          New chat
        </button>
      </div>
      {problem && sessions !== null ? (
        <p role="alert" className="mx-3 mt-2 text-destructive text-sm">
          {problem.message}
        </p>
      ) : null}
      <div className="min-h-0 flex-1">
        {listing ? (
          <div className="flex h-full min-h-0 flex-col overflow-y-auto">
            <SessionSidebar
              label="Your chats"
              sessions={sessions.map((session) => summary(session, showCost))}
              currentId={currentId}
              onNew={() => void start(null)}
              onRename={(id, title) => void rename(id, title)}
              renderLink={(session, children, props) => (
                <button
                  type="button"
                  {...props}
                  className={`${props.className} text-left`}
                  onClick={() => {
                    setFirstMessage(null);
                    setCurrentId(session.id);
                    setListing(false);
                  }}
                >
                  {children}
                </button>
              )}
            />
            {older !== null ? (
              <button
                type="button"
                onClick={() => void loadOlder()}
                disabled={loadingOlder}
                className={`${toolButton} m-2 self-center`}
              >
                {loadingOlder ? "Loading…" : "Older chats"}
              </button>
            ) : null}
          </div>
        ) : currentId === null ? (
          <div className="flex h-full min-h-0 flex-col">
            <div className="flex min-h-0 flex-1 overflow-y-auto">
              {/* Centred while it fits; scrolls from its top when it does not. */}
              <div className="m-auto w-full">
                <Opening opening={opening} send={(text) => void start(text)} />
              </div>
            </div>
            <Composer
              busy={false}
              closedReason={creating ? "Starting a new chat…" : null}
              onSend={(text) => void start(text)}
              onStop={() => undefined}
              autoFocus={autoFocus}
            />
          </div>
        ) : (
          <ChatBoundary key={currentId} onError={onError}>
            <Connected
              client={client}
              sessionId={currentId}
              showCost={showCost}
              autoFocus={autoFocus}
              firstMessage={firstMessage}
              onTurnEnd={onTurnEnd}
              approver="you"
              opening={opening}
            />
          </ChatBoundary>
        )}
      </div>
    </div>
  );
}
