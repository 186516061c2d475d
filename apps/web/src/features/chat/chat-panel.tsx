import { useAgentChat } from "@cloudflare/ai-chat/react";
import { useAgent } from "agents/react";
import { isToolUIPart, type UIMessage } from "ai";
import { type FormEvent, type ReactNode, Suspense, useCallback, useEffect, useState } from "react";
import { ErrorBoundary } from "../../components/error-boundary.tsx";
import { api } from "../../lib/api.ts";
import { ToolPartView } from "./tool-part.tsx";

export type AgentKind = "onboarding-agent" | "assistant-agent";

/** Around a ChatPanel: "Connecting…" while the socket opens, and a failure kept to the panel. */
export function ChatBoundary({ children }: { children: ReactNode }) {
  return (
    <ErrorBoundary>
      <Suspense
        fallback={
          <p role="status" className="muted">
            Connecting…
          </p>
        }
      >
        {children}
      </Suspense>
    </ErrorBoundary>
  );
}

/**
 * The server keeps the transcript and takes only the new message from a request, so the request
 * carries only that: its size stays flat however long the chat (the transport lets a request's body
 * replace the messages it would send).
 */
const lastMessageOnly = ({ messages }: { messages: UIMessage[] }) => ({
  body: { messages: messages.slice(-1) },
});

/** A refusal the agent sends on the socket (`parley_error`), outside the chat protocol. */
export interface ParleyError {
  code: string;
  message: string;
}

/**
 * What a final close of the chat's socket means for the person (the server closes with 4403 when
 * their access ended, 4410 when the chat was erased; the SDK does not reconnect after either).
 */
export function closeNotice(code: number): ParleyError | null {
  if (code === 4403) {
    return { code: "forbidden", message: "You no longer have access to this chat." };
  }
  if (code === 4410) return { code: "gone", message: "This chat was erased." };
  return null;
}

export function readParleyError(data: unknown): ParleyError | null {
  if (typeof data !== "string") return null;
  try {
    const frame = JSON.parse(data) as {
      type?: unknown;
      error?: { code?: unknown; message?: unknown };
    };
    if (frame.type !== "parley_error") return null;
    return {
      code: typeof frame.error?.code === "string" ? frame.error.code : "internal",
      message: typeof frame.error?.message === "string" ? frame.error.message : "Request refused",
    };
  } catch {
    return null;
  }
}

export const messageText = (message: UIMessage): string =>
  message.parts
    .map((part) => (part.type === "text" || part.type === "reasoning" ? part.text : ""))
    .join("");

interface ChatPanelProps {
  agent: AgentKind;
  /** Project id (onboarding) or session id (assistant). */
  name: string;
  label: string;
  /** Rendered under each assistant reply. */
  renderMeta?: (message: UIMessage) => ReactNode;
  /** Rendered above the composer, given the transcript (free turns left, calls to action). */
  renderStatus?: (messages: UIMessage[]) => ReactNode;
  /** Disables the composer (preview exhausted). */
  closed?: (messages: UIMessage[]) => boolean;
  /** Offers "Regenerate" for the last reply (the assistant; the free preview does not). */
  regenerate?: boolean;
}

/**
 * One agent chat over the agents WebSocket. The socket opens with a single-use connect ticket from
 * the async `query` (never the access token: URLs are logged), asked for again on every
 * (re)connect: the SDK drops its cached query when a socket closes. History is the server's
 * (`get-messages` with the bearer token), and the client never pushes its copy back.
 */
export function ChatPanel({
  agent,
  name,
  label,
  renderMeta,
  renderStatus,
  closed,
  regenerate = false,
}: ChatPanelProps) {
  const query = useCallback(
    async () => ({ ticket: await api.connectTicket(agent, name) }),
    [agent, name],
  );
  // A ticket is spent by the connect it opened: no point refreshing it while the socket is up.
  const connection = useAgent({ agent, name, query, cacheTtl: 24 * 60 * 60_000 });
  const getInitialMessages = useCallback(
    () => api.get<UIMessage[]>(`/agents/${agent}/${encodeURIComponent(name)}/get-messages`),
    [agent, name],
  );
  const chat = useAgentChat({
    agent: connection,
    getInitialMessages,
    syncMessagesToServer: false,
    prepareSendMessagesRequest: lastMessageOnly,
  });
  const [refusal, setRefusal] = useState<ParleyError | null>(null);
  /** The socket was closed for good (access lost, chat erased): nothing more can be sent. */
  const [lost, setLost] = useState(false);
  const [draft, setDraft] = useState("");

  const { setMessages } = chat;
  useEffect(() => {
    const onMessage = (event: MessageEvent) => {
      const error = readParleyError(event.data);
      if (error) setRefusal(error);
      // After a reconnect the server says whether a reply is still streaming. If it finished while
      // the socket was down, its chunks are gone: reload the transcript so the reply shows whole.
      if (typeof event.data === "string" && event.data.includes('"cf_agent_stream_resume_none"')) {
        void getInitialMessages().then(
          (messages) => setMessages(messages),
          () => undefined,
        );
      }
    };
    const onClose = (event: CloseEvent) => {
      const notice = closeNotice(event.code);
      if (notice) {
        setRefusal(notice);
        setLost(true);
      }
    };
    connection.addEventListener("message", onMessage);
    connection.addEventListener("close", onClose);
    return () => {
      connection.removeEventListener("message", onMessage);
      connection.removeEventListener("close", onClose);
    };
  }, [connection, getInitialMessages, setMessages]);

  const busy = chat.status === "submitted" || chat.status === "streaming" || chat.isStreaming;
  const isClosed = lost || (closed?.(chat.messages) ?? false);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const text = draft.trim();
    if (!text || busy || isClosed) return;
    setRefusal(null);
    setDraft("");
    void chat.sendMessage({ text });
  }

  return (
    <section className="chat" aria-label={label}>
      <ol className="messages" aria-live="polite">
        {chat.messages.length === 0 ? (
          <li className="empty">No messages yet. Say hello.</li>
        ) : (
          chat.messages.map((message) => (
            <li key={message.id} className={`message ${message.role}`}>
              <span className="visually-hidden">
                {message.role === "user" ? "You:" : "Assistant:"}
              </span>
              <p className="bubble">{messageText(message)}</p>
              {message.parts.filter(isToolUIPart).map((part) => (
                <ToolPartView
                  key={part.toolCallId}
                  part={part}
                  onRespond={chat.addToolApprovalResponse}
                />
              ))}
              {message.role === "assistant" ? renderMeta?.(message) : null}
            </li>
          ))
        )}
      </ol>
      {refusal ? (
        <p role="alert" className="error">
          {refusal.message}
        </p>
      ) : null}
      {chat.error ? (
        <p role="alert" className="error">
          {chat.error.message}
        </p>
      ) : null}
      {renderStatus?.(chat.messages)}
      <form className="composer" onSubmit={onSubmit}>
        <label className="visually-hidden" htmlFor={`composer-${name}`}>
          Message
        </label>
        <textarea
          id={`composer-${name}`}
          value={draft}
          rows={2}
          disabled={isClosed}
          placeholder={isClosed ? "This chat is closed." : "Write a message…"}
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === "Enter" && !event.shiftKey) {
              event.preventDefault();
              event.currentTarget.form?.requestSubmit();
            }
          }}
        />
        {busy ? (
          <button type="button" onClick={() => void chat.stop()}>
            Stop
          </button>
        ) : (
          <>
            {regenerate && !isClosed && chat.messages.at(-1)?.role === "assistant" ? (
              // Answers the last message again; the server rebuilds the turn from its own
              // transcript, so only the last reply can be replaced.
              <button
                type="button"
                onClick={() => {
                  setRefusal(null);
                  void chat.regenerate();
                }}
              >
                Regenerate
              </button>
            ) : null}
            <button type="submit" className="primary" disabled={isClosed || draft.trim() === ""}>
              Send
            </button>
          </>
        )}
      </form>
    </section>
  );
}
