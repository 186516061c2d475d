import { useAgentChat } from "@cloudflare/ai-chat/react";
import { useAgent } from "agents/react";
import type { ChatStatus, UIMessage } from "ai";
import { useCallback, useEffect, useRef, useState } from "react";
import { sameTranscript } from "./light-chat.ts";
import {
  closeNotice,
  isStreamResumeNone,
  lastMessageOnly,
  messageText,
  type ParleyError,
  readParleyError,
} from "./protocol.ts";

/** The two agents a Parley chat can talk to. */
export type AgentKind = "onboarding-agent" | "assistant-agent";

/** Where and how a chat connects. */
export interface UseParleyChatOptions {
  agent: AgentKind;
  /** Project id (onboarding) or session id (assistant). */
  name: string;
  /**
   * A fresh single-use connect ticket for this chat, asked for on every (re)connect: the SDK drops
   * its cached query when a socket closes, and the access token must never be in a URL (URLs are
   * logged).
   */
  connectTicket: () => Promise<string>;
  /** The transcript from the server (`get-messages` with the bearer token). */
  loadMessages: () => Promise<UIMessage[]>;
  /** The Worker's host when it is not the page's own (the embeddable assistant). */
  host?: string;
}

/** A tool approval answer (`addToolApprovalResponse`, i.e. `cf_agent_tool_approval` on the wire). */
export type ApprovalResponder = (response: { id: string; approved: boolean }) => void;

/**
 * What the chat view needs from a chat: the transcript, its state and the actions. Narrower than
 * the SDK's chat so a view can be driven by a fake in tests (and by another transport later).
 */
export interface ParleyChatState {
  messages: UIMessage[];
  status: ChatStatus;
  /** The last request's failure (it belongs to the last reply). */
  error: Error | undefined;
  /** A refusal by the server (`parley_error`) or why the socket closed for good. */
  refusal: ParleyError | null;
  /** The socket was closed for good (access lost, chat erased): nothing more can be sent. */
  lost: boolean;
  /**
   * A reply is on its way: from Send (or Regenerate, or an approval) until it has ended
   * (completed, stopped, failed, or its socket dropped); also a reply streamed by the server for
   * another tab, resumed after a reload, or being recovered. Never false in the middle of one.
   */
  busy: boolean;
  /** Ids of assistant replies the person stopped in this tab (the server may not say so yet). */
  stoppedIds: ReadonlySet<string>;
  /**
   * A message the server refused before storing it (a limit, no credits, a reply still being
   * written), taken back out of the transcript: the composer puts its text back (`seq` counts
   * refusals, so the same text refused twice is returned twice).
   */
  returnedDraft: ReturnedDraft | null;
  send: (text: string) => void;
  stop: () => void;
  regenerate: () => void;
  respondToApproval: ApprovalResponder;
  clearRefusal: () => void;
}

/** The text of a refused message, handed back to the composer. */
export interface ReturnedDraft {
  text: string;
  seq: number;
}

/** A connected chat: the view state plus the SDK's chat for anything the view does not cover. */
export interface ParleyChat extends ParleyChatState {
  chat: ReturnType<typeof useAgentChat>;
}

const DAY_MS = 24 * 60 * 60_000;

/**
 * How many times each chat's hook has unmounted, by address. The SDK caches a chat's query (its
 * connect ticket) by address and drops it only when a socket closes to reconnect, not when the
 * chat unmounts: coming back to a chat (Back, a link) reused the spent ticket, the upgrade was
 * refused and the browser logged a failed WebSocket. A new mount asks under a new key instead.
 * Module state, not React state: a mount that suspends keeps no state between its tries.
 */
const unmounts = new Map<string, number>();

/**
 * One agent chat over the agents WebSocket, with Parley's rules on top of the SDK: the socket opens
 * with a connect ticket; history is the server's and the client never pushes its copy back
 * (`syncMessagesToServer: false`); a request carries only the new message; streams resume after a
 * reconnect, and a reply that finished while the socket was down is reloaded from the server.
 *
 * Suspends while the transcript loads (the SDK reads it with `use`): render it under `<Suspense>`,
 * and under an error boundary for a transcript that fails to load.
 */
export function useParleyChat({
  agent,
  name,
  connectTicket,
  loadMessages,
  host,
}: UseParleyChatOptions): ParleyChat {
  // Callers pass inline functions; a new identity must not reconnect the socket or refetch.
  const ticketRef = useRef(connectTicket);
  ticketRef.current = connectTicket;
  const loadRef = useRef(loadMessages);
  loadRef.current = loadMessages;
  /**
   * Closed for good (access lost, chat erased): nothing is asked of the server any more. The SDK
   * may still re-run its query or reload the transcript after such a close; each would be a 404 or
   * 410 in the console (a removed member's open chat logged three).
   */
  const closedForGood = useRef(false);
  const messagesRef = useRef<UIMessage[]>([]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new chat address is a new query
  const query = useCallback(
    async () => ({ ticket: closedForGood.current ? "" : await ticketRef.current() }),
    [agent, name],
  );
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new chat address reloads
  const getInitialMessages = useCallback(
    () => (closedForGood.current ? Promise.resolve(messagesRef.current) : loadRef.current()),
    [agent, name],
  );

  // A ticket is spent by the connect it opened: no point refreshing it while the socket is up.
  const address = `${agent}/${name}`;
  // Read once per mount (React's strict mode runs a simulated unmount that must not re-key it).
  const [mounted] = useState(() => ({ address, generation: unmounts.get(address) ?? 0 }));
  const generation =
    mounted.address === address ? mounted.generation : (unmounts.get(address) ?? 0);
  const connection = useAgent({
    agent,
    name,
    query,
    queryDeps: [generation],
    // Read on the render that follows the final close (it sets `lost`): no socket again.
    enabled: !closedForGood.current,
    cacheTtl: DAY_MS,
    ...(host === undefined ? {} : { host }),
  });
  useEffect(() => () => void unmounts.set(address, (unmounts.get(address) ?? 0) + 1), [address]);
  const chat = useAgentChat({
    agent: connection,
    getInitialMessages,
    syncMessagesToServer: false,
    prepareSendMessagesRequest: lastMessageOnly,
  });

  const [refusal, setRefusal] = useState<ParleyError | null>(null);
  const [lost, setLost] = useState(false);
  const [stoppedIds, setStoppedIds] = useState<ReadonlySet<string>>(() => new Set());
  /** A stop pressed before the reply had a message: the id of the user message it answers. */
  const stopPendingAfter = useRef<string | null>(null);
  /** What this tab asked for last: a refusal of it takes the message back (see `returnedDraft`). */
  const lastAsked = useRef<{ trigger: "submit"; text: string } | { trigger: "regenerate" } | null>(
    null,
  );
  /** A refusal of this tab's request arrived; the SDK's turn ends after it, then it is undone. */
  const takeBack = useRef(false);
  const [returnedDraft, setReturnedDraft] = useState<ReturnedDraft | null>(null);
  /**
   * A send or regeneration of this tab is on its way: from the key press until the AI SDK's
   * promise for that request settles, which it does only once the request has ended (completed,
   * failed, stopped, or cut by a dropped socket). The SDK's `status` cannot say this: its resume
   * requests share it, and one that ends while this request streams (the server's answer to the
   * probe a socket sends when it opens, arriving after a message sent right away; the replay of
   * an earlier failed turn) sets it to "ready" or "error" mid-reply. Stop then gave way to Send
   * for a moment, and an Enter in that moment sent a message the server refused.
   */
  const [asking, setAsking] = useState(false);
  /**
   * Counts sends and regenerates: only the latest one's end clears `asking`, and a transcript
   * reloaded after `resume_none` replaces the client's messages only if nothing was sent meanwhile
   * (a message typed right after the socket opened would otherwise vanish, and its reply stream
   * with it).
   */
  const sends = useRef(0);
  const busyRef = useRef(false);
  const ask = useCallback((request: () => Promise<void>) => {
    const seq = ++sends.current;
    busyRef.current = true;
    setAsking(true);
    const done = () => {
      if (sends.current === seq) setAsking(false);
    };
    request().then(done, done);
  }, []);

  const { setMessages } = chat;
  messagesRef.current = chat.messages;
  useEffect(() => {
    const onMessage = (event: MessageEvent) => {
      const error = readParleyError(event.data);
      if (error) setRefusal(error);
      // A chat request of this socket was refused before the server stored anything of it.
      if (error?.requestId && lastAsked.current) takeBack.current = true;
      // After a reconnect the server says whether a reply is still streaming. If it finished while
      // the socket was down, its chunks are gone: reload the transcript so the reply shows whole.
      if (isStreamResumeNone(event.data) && !busyRef.current) {
        const before = sends.current;
        void getInitialMessages().then(
          (messages) => {
            if (sends.current !== before || busyRef.current) return;
            // Usually the transcript just read on open: replacing it would re-render every message.
            if (sameTranscript(messagesRef.current, messages)) return;
            setMessages(messages);
          },
          () => undefined,
        );
      }
    };
    const onClose = (event: CloseEvent) => {
      const notice = closeNotice(event.code);
      if (notice) {
        setRefusal(notice);
        closedForGood.current = true;
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

  const { messages } = chat;
  useEffect(() => {
    const after = stopPendingAfter.current;
    if (after === null) return;
    const index = messages.findIndex((message) => message.id === after);
    const reply = index < 0 ? undefined : messages[index + 1];
    if (reply?.role !== "assistant") return;
    stopPendingAfter.current = null;
    setStoppedIds((ids) => new Set(ids).add(reply.id));
  }, [messages]);

  // Not the SDK's `status` alone: another request of the SDK's (the resume probe a socket sends
  // when it opens, a tool continuation) sets it to "ready" or "error" when it ends, whatever
  // this tab's own request is doing. See `ask` and docs/2026-12-06-busy-state.md.
  const busy =
    !lost &&
    (asking ||
      chat.status === "submitted" ||
      chat.status === "streaming" ||
      chat.isStreaming ||
      chat.isRecovering ||
      chat.isToolContinuation);
  busyRef.current = busy;

  // Once the refused request has ended on the SDK's side: its message comes back out of the
  // transcript (into the composer), or a refused regeneration's old reply comes back from the
  // server; the SDK's error for it is cleared (the refusal says what happened, not "failed").
  const { clearError } = chat;
  // biome-ignore lint/correctness/useExhaustiveDependencies: run again when the refusal arrives (the flag is a ref)
  useEffect(() => {
    if (busy || !takeBack.current) return;
    takeBack.current = false;
    const asked = lastAsked.current;
    lastAsked.current = null;
    clearError();
    if (asked?.trigger === "submit") {
      const index = messages.findLastIndex((message) => message.role === "user");
      const sent = messages[index];
      if (sent && messageText(sent) === asked.text) {
        setMessages(messages.slice(0, index));
        setReturnedDraft((last) => ({ text: asked.text, seq: (last?.seq ?? 0) + 1 }));
      }
    } else if (asked?.trigger === "regenerate") {
      void getInitialMessages().then(setMessages, () => undefined);
    }
  }, [busy, messages, refusal, clearError, setMessages, getInitialMessages]);

  const send = useCallback(
    (text: string) => {
      const trimmed = text.trim();
      if (trimmed === "" || busy || lost) return;
      stopPendingAfter.current = null;
      setRefusal(null);
      lastAsked.current = { trigger: "submit", text: trimmed };
      takeBack.current = false;
      // A whole message rather than `{ text }`: the SDK then adds it and turns "submitted" within
      // this key press, so Stop, the message and "Thinking…" show in one render with the cleared
      // box (`{ text }` waits a microtask for files first, a render showing the box empty and Send).
      ask(() => chat.sendMessage({ role: "user", parts: [{ type: "text", text: trimmed }] }));
    },
    [busy, lost, ask, chat.sendMessage],
  );

  const stop = useCallback(() => {
    const last = messages.at(-1);
    if (last?.role === "assistant") setStoppedIds((ids) => new Set(ids).add(last.id));
    else if (last) stopPendingAfter.current = last.id;
    void chat.stop();
  }, [messages, chat.stop]);

  const regenerate = useCallback(() => {
    if (busy || lost) return;
    // Answers the last message again; the server rebuilds the turn from its own transcript, so
    // only the last reply can be replaced. The new reply is not stopped just because the old was.
    const last = messages.at(-1);
    if (last?.role === "assistant") {
      setStoppedIds((ids) => {
        const next = new Set(ids);
        next.delete(last.id);
        return next;
      });
    }
    stopPendingAfter.current = null;
    setRefusal(null);
    lastAsked.current = { trigger: "regenerate" };
    takeBack.current = false;
    ask(() => chat.regenerate());
  }, [busy, lost, messages, ask, chat.regenerate]);

  const respondToApproval = useCallback<ApprovalResponder>(
    (response) => void chat.addToolApprovalResponse(response),
    [chat.addToolApprovalResponse],
  );
  const clearRefusal = useCallback(() => setRefusal(null), []);

  return {
    chat,
    messages,
    status: chat.status,
    error: chat.error,
    refusal,
    lost,
    busy,
    stoppedIds,
    returnedDraft,
    send,
    stop,
    regenerate,
    respondToApproval,
    clearRefusal,
  };
}
