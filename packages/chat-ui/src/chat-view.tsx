import type { UIMessage } from "ai";
import { ArrowDown, X } from "lucide-react";
import { type ReactNode, useEffect, useMemo, useRef, useState } from "react";
import { useStickToBottom } from "use-stick-to-bottom";
import { ChatMessage, FailedReply } from "./chat-message.tsx";
import { cn } from "./cn.ts";
import { Composer } from "./composer.tsx";
import { preloadMarkdown } from "./markdown.tsx";
import type { ParleyError } from "./protocol.ts";
import type { ReplyEnd } from "./reply-footer.tsx";
import { describeReason, readAssistantMeta, type StopCode } from "./reply-meta.ts";
import type { OpenSource } from "./reply-sources.tsx";
import type { ParleyChatState } from "./use-parley-chat.ts";

/** What the app decides around the chat; the chat itself comes from useParleyChat. */
export interface ChatViewProps {
  chat: ParleyChatState;
  /** The chat's accessible name (the region and its log). */
  label: string;
  /** Extra content under each assistant reply, before its footer (e.g. free turns left). */
  renderMeta?: (message: UIMessage) => ReactNode;
  /** Above the composer, given the transcript (preview status, calls to action). */
  renderStatus?: (messages: UIMessage[]) => ReactNode;
  /**
   * The call to action when billing stopped a reply. The app words it per code: a spend limit
   * is lifted by an admin, not by a top-up, so it must not offer "Top up".
   */
  renderStopAction?: (code: StopCode) => ReactNode;
  /**
   * The app's own notice for a refusal (a spend limit with the button to raise it), shown in place
   * of the default alert and of `renderStatus`: one notice above the composer, not two. Return
   * null to keep the default alert.
   */
  renderRefusal?: (refusal: ParleyError) => ReactNode;
  /** Why the composer is closed (e.g. the free preview is used up), or null while it is open. */
  closedReason?: (messages: UIMessage[]) => string | null;
  /**
   * Who answers this chat's tool approvals (an assistant session's owner: only they can), named
   * in the record an answered approval leaves in the transcript.
   */
  approver?: string;
  /** Offer "Regenerate" on the last reply (the assistant; the free preview does not). */
  regenerate?: boolean;
  /**
   * Shown in place of the transcript when there are no messages yet; a function gets `send`, so
   * an opening can offer suggested prompts that start the chat.
   */
  emptyState?: ReactNode | ((send: (text: string) => void) => ReactNode);
  placeholder?: string;
  autoFocus?: boolean;
  /**
   * Show each reply's cost (default). Off for an app's end users unless the app's `showCost`:
   * they do not pay for it, the org does.
   */
  showCost?: boolean;
  /**
   * Reads a cited passage when a reply's source is opened (a member's content route, an end
   * user's passage route); without it the source shows the quote the reply kept.
   */
  openSource?: OpenSource;
  className?: string;
}

/**
 * A long transcript opens with its newest messages only; the older ones come in pages as the
 * person scrolls up (or asks for them). Rendering all of a 200-message session's markdown on open
 * kept the main thread busy for about half a second on this project's test machines.
 */
export const TRANSCRIPT_WINDOW = 40;

const hasContent = (message: UIMessage | undefined): boolean =>
  message?.role === "assistant" &&
  message.parts.some(
    (part) =>
      ((part.type === "text" || part.type === "reasoning") && part.text !== "") ||
      part.type.startsWith("tool-") ||
      part.type === "dynamic-tool",
  );

const pendingApprovals = (messages: UIMessage[]): number =>
  messages.reduce(
    (count, message) =>
      count +
      message.parts.filter(
        (part) => "state" in part && part.state === ("approval-requested" as string),
      ).length,
    0,
  );

/**
 * The whole chat in its parent's height: the transcript scrolls inside, the composer stays at the
 * bottom, and the page never grows with the transcript. The transcript follows the newest message
 * (on load, on send, while a reply streams, when an approval is asked) until the person scrolls up;
 * then "Jump to newest" brings them back.
 */
export function ChatView({
  chat,
  label,
  renderMeta,
  renderStatus,
  renderStopAction,
  renderRefusal,
  approver,
  closedReason,
  regenerate = false,
  emptyState,
  placeholder,
  autoFocus,
  showCost = true,
  openSource,
  className,
}: ChatViewProps) {
  const { messages, busy, error, refusal, lost, stoppedIds, returnedDraft } = chat;
  // Instant on resize too: a long transcript settles its real heights as it paints, and a smooth
  // scroll would chase them (the newest message arrived on screen 200 ms late at 200 messages).
  const stick = useStickToBottom({ initial: "instant", resize: "instant" });
  const { scrollToBottom } = stick;

  useEffect(preloadMarkdown, []);

  const approvals = pendingApprovals(messages);
  useEffect(() => {
    if (approvals > 0) void scrollToBottom();
  }, [approvals, scrollToBottom]);

  const last = messages.at(-1);
  const reason = lost
    ? (refusal?.message ?? "This chat is closed.")
    : (closedReason?.(messages) ?? null);
  // Between Send and the first token (or while the server has not written a reply message yet).
  const thinking = busy && !hasContent(last);
  const failedBeforeReply = !busy && error !== undefined && last?.role === "user";

  const ends = useMemo(() => {
    const map = new Map<string, ReplyEnd>();
    messages.forEach((message, index) => {
      if (message.role !== "assistant") return;
      const meta = readAssistantMeta(message.metadata);
      const isLast = index === messages.length - 1;
      const reason = meta.reason === undefined ? undefined : describeReason(meta.reason);
      if (meta.finish === "failed") {
        map.set(message.id, { kind: "failed", error: meta.error ?? reason });
      } else if (meta.finish === "stopped" || stoppedIds.has(message.id)) {
        // A billing stop has its own notice; the mark is for the person's Stop or a lost access.
        // Before the client's own error: stopping aborts the stream, and the transport may report
        // that abort as an error, but the person stopped this reply: it did not fail.
        map.set(message.id, reason ? { kind: "stopped", reason } : { kind: "stopped" });
      } else if (isLast && !busy && error) {
        map.set(message.id, { kind: "failed", error: error.message });
      }
    });
    return map;
  }, [messages, busy, error, stoppedIds]);

  // How many of the oldest messages are not rendered yet. Fixed at open: new messages add to the
  // window, "Show earlier" and scrolling to the top take it back a page at a time.
  const [hiddenAtOpen, setHidden] = useState(() =>
    Math.max(0, messages.length - TRANSCRIPT_WINDOW),
  );
  const hidden = Math.min(hiddenAtOpen, Math.max(0, messages.length - TRANSCRIPT_WINDOW));
  const shown = hidden === 0 ? messages : messages.slice(hidden);
  const showEarlier = () => setHidden(Math.max(0, hidden - TRANSCRIPT_WINDOW));
  const earlier = useRef<HTMLButtonElement>(null);
  const { isAtBottom } = stick;
  // biome-ignore lint/correctness/useExhaustiveDependencies: observed anew after each page, so a page that still leaves the button in reach loads the next
  useEffect(() => {
    const button = earlier.current;
    const root = stick.scrollRef.current;
    // Only once the person scrolled away from the newest: on open the list starts at the bottom.
    if (!button || !root || isAtBottom || typeof IntersectionObserver === "undefined") return;
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((entry) => entry.isIntersecting))
          setHidden((h) => Math.max(0, h - TRANSCRIPT_WINDOW));
      },
      { root, rootMargin: "600px 0px 0px 0px" },
    );
    observer.observe(button);
    return () => observer.disconnect();
  }, [isAtBottom, hidden, stick.scrollRef]);

  const appNotice = refusal && !lost ? (renderRefusal?.(refusal) ?? null) : null;

  const send = (text: string) => {
    chat.send(text);
    void scrollToBottom();
  };

  return (
    <section
      aria-label={label}
      className={cn("flex h-full min-h-0 flex-col bg-background text-foreground", className)}
    >
      <div className="relative min-h-0 flex-1">
        <div ref={stick.scrollRef} className="h-full overflow-y-auto overscroll-contain">
          <div ref={stick.contentRef} className="mx-auto w-full max-w-3xl px-4 py-6">
            {messages.length === 0 && !thinking ? (
              <div className="py-12 text-center text-muted-foreground text-sm">
                {(typeof emptyState === "function" ? emptyState(send) : emptyState) ??
                  "No messages yet. Say hello."}
              </div>
            ) : null}
            {hidden > 0 ? (
              <div className="mb-4 flex justify-center">
                <button
                  ref={earlier}
                  type="button"
                  onClick={showEarlier}
                  className="rounded-full border border-border px-3 py-1.5 text-muted-foreground text-sm outline-none hover:bg-accent hover:text-foreground focus-visible:ring-2 focus-visible:ring-ring"
                >
                  Show earlier messages ({hidden})
                </button>
              </div>
            ) : null}
            <ol aria-label={`${label} messages`} aria-live="polite" className="flex flex-col gap-4">
              {shown.map((message, index) => {
                const isLast = index === shown.length - 1;
                // A reply with nothing in it yet is the thinking indicator below, not an empty bubble.
                if (isLast && thinking && message.role === "assistant") return null;
                return (
                  <ChatMessage
                    key={message.id}
                    message={message}
                    streaming={busy && isLast && message.role === "assistant"}
                    end={ends.get(message.id) ?? null}
                    onRegenerate={
                      regenerate && isLast && !busy && reason === null ? chat.regenerate : undefined
                    }
                    onRespond={chat.respondToApproval}
                    approver={approver}
                    closed={reason !== null}
                    renderMeta={renderMeta}
                    renderStopAction={renderStopAction}
                    showCost={showCost}
                    openSource={openSource}
                  />
                );
              })}
              {failedBeforeReply ? <FailedReply error={error.message} /> : null}
            </ol>
            {thinking ? (
              <div
                role="status"
                className="mt-4 flex items-center gap-2 text-muted-foreground text-sm"
              >
                <span className="flex gap-1" aria-hidden="true">
                  <span className="size-1.5 animate-bounce rounded-full bg-muted-foreground" />
                  <span className="size-1.5 animate-bounce rounded-full bg-muted-foreground [animation-delay:150ms]" />
                  <span className="size-1.5 animate-bounce rounded-full bg-muted-foreground [animation-delay:300ms]" />
                </span>
                Thinking…
              </div>
            ) : null}
          </div>
        </div>
        {stick.isAtBottom ? null : (
          <button
            type="button"
            onClick={() => void scrollToBottom("smooth")}
            className="-translate-x-1/2 absolute bottom-3 left-1/2 inline-flex items-center gap-1 rounded-full border border-border bg-card px-3 py-1.5 text-card-foreground text-sm shadow-md outline-none hover:bg-accent focus-visible:ring-2 focus-visible:ring-ring"
          >
            <ArrowDown aria-hidden="true" className="size-4" />
            Jump to newest
          </button>
        )}
      </div>
      {appNotice ? (
        <div className="mx-auto w-full max-w-3xl px-3">{appNotice}</div>
      ) : refusal && !lost ? (
        <div
          role="alert"
          className="mx-3 mb-1 flex items-start gap-2 rounded-md border border-destructive px-3 py-2 text-destructive text-sm sm:mx-auto sm:w-[calc(100%-1.5rem)] sm:max-w-[calc(48rem-1.5rem)]"
        >
          <span className="flex-1">{refusal.message}</span>
          <button
            type="button"
            aria-label="Dismiss"
            onClick={chat.clearRefusal}
            className="rounded-sm outline-none focus-visible:ring-2 focus-visible:ring-ring"
          >
            <X aria-hidden="true" className="size-4" />
          </button>
        </div>
      ) : null}
      {renderStatus && !appNotice ? (
        <div className="mx-auto w-full max-w-3xl px-3">{renderStatus(messages)}</div>
      ) : null}
      <Composer
        busy={busy}
        onSend={send}
        onStop={chat.stop}
        closedReason={reason}
        placeholder={placeholder}
        autoFocus={autoFocus}
        returned={returnedDraft}
      />
    </section>
  );
}
