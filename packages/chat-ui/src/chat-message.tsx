import type { UIMessage } from "ai";
import { ChevronLeft, ChevronRight } from "lucide-react";
import { type ReactNode, useState } from "react";
import { cn } from "./cn.ts";
import { Markdown, PlainText } from "./markdown.tsx";
import { messageText } from "./protocol.ts";
import { Reasoning } from "./reasoning.tsx";
import { CopyButton, type ReplyEnd, ReplyFooter } from "./reply-footer.tsx";
import { readVersions, type StopCode } from "./reply-meta.ts";
import { type OpenSource, ReplySources, readCitations } from "./reply-sources.tsx";
import { isToolPart } from "./tool-name.ts";
import { ToolPartView } from "./tool-part.tsx";
import type { ApprovalResponder } from "./use-parley-chat.ts";

/** One message of the transcript; see ChatView for where the flags come from. */
export interface ChatMessageProps {
  message: UIMessage;
  /** This reply is still arriving. */
  streaming?: boolean;
  end?: ReplyEnd | null;
  onRegenerate?: () => void;
  onRespond: ApprovalResponder;
  /** The chat is closed: approvals cannot be answered. */
  closed?: boolean;
  renderMeta?: (message: UIMessage) => ReactNode;
  renderStopAction?: (code: StopCode) => ReactNode;
  /** Show what the reply cost (off where the person does not pay: an app's end users). */
  showCost?: boolean;
  /** Who answers this chat's approvals (its owner), for the record an answer leaves. */
  approver?: string;
  /** Reads a cited passage when a reply's source is opened (the app's route for it). */
  openSource?: OpenSource;
}

/**
 * The browser skips laying out and painting messages off screen (a long session opens in the time
 * of the few it shows); each keeps its last measured height as its placeholder, so scrolling and
 * stick-to-bottom see the real heights once a message has been on screen.
 */
const offscreen = "[content-visibility:auto] [contain-intrinsic-size:auto_6rem]";

const switchButton =
  "inline-flex size-6 items-center justify-center rounded-md text-muted-foreground outline-none hover:bg-accent hover:text-foreground focus-visible:ring-2 focus-visible:ring-ring disabled:opacity-40";

/**
 * A person's message as plain text (never markdown: what they typed is shown as typed), or an
 * assistant reply: its parts in order (reasoning apart, markdown answer, tool cards), then its
 * footer. `relative` keeps the screen-reader-only speaker label positioned inside the item.
 */
export function ChatMessage({
  message,
  streaming = false,
  end = null,
  onRegenerate,
  onRespond,
  closed = false,
  renderMeta,
  renderStopAction,
  showCost = true,
  approver,
  openSource,
}: ChatMessageProps) {
  if (message.role === "user") {
    return (
      <li className={cn("group relative flex flex-col items-end gap-1", offscreen)}>
        <span className="sr-only">You said:</span>
        <PlainText className="max-w-[85%] rounded-lg bg-primary px-3 py-2 text-primary-foreground text-sm">
          {messageText(message)}
        </PlainText>
        {/* Shown on hover or focus where there is a pointer that hovers; always on a touch screen. */}
        <CopyButton
          text={messageText(message)}
          className="focus-visible:opacity-100 [@media(hover:hover)]:opacity-0 [@media(hover:hover)]:group-hover:opacity-100"
        />
      </li>
    );
  }
  return (
    <AssistantReply
      message={message}
      streaming={streaming}
      end={end}
      onRegenerate={onRegenerate}
      onRespond={onRespond}
      closed={closed}
      renderMeta={renderMeta}
      renderStopAction={renderStopAction}
      showCost={showCost}
      approver={approver}
      openSource={openSource}
    />
  );
}

/**
 * A reply, with a switcher between it and its earlier versions when it was regenerated (the
 * server keeps them in its metadata): an earlier version shows as it was, read-only.
 */
function AssistantReply({
  message: current,
  streaming = false,
  end = null,
  onRegenerate,
  onRespond,
  closed = false,
  renderMeta,
  renderStopAction,
  showCost = true,
  approver,
  openSource,
}: ChatMessageProps) {
  const versions = readVersions(current.metadata);
  const [picked, setPicked] = useState<number | null>(null);
  const index = picked === null || picked >= versions.length ? versions.length : picked;
  const earlier = index < versions.length ? versions[index] : undefined;
  const message: UIMessage = earlier
    ? { ...current, parts: earlier.parts as UIMessage["parts"], metadata: earlier.metadata }
    : current;
  const answerStarted = message.parts.some((part) => part.type === "text" && part.text !== "");
  const switcher =
    versions.length > 0 && !streaming ? (
      <fieldset
        aria-label="Versions of this reply"
        className="m-0 flex min-w-0 items-center gap-1 border-0 p-0"
      >
        <button
          type="button"
          aria-label="Earlier version"
          disabled={index === 0}
          onClick={() => setPicked(index - 1)}
          className={switchButton}
        >
          <ChevronLeft aria-hidden="true" className="size-3.5" />
        </button>
        <span className="text-muted-foreground text-xs tabular-nums" aria-live="polite">
          {index + 1} / {versions.length + 1}
        </span>
        <button
          type="button"
          aria-label="Later version"
          disabled={index === versions.length}
          onClick={() => setPicked(index + 1 >= versions.length ? null : index + 1)}
          className={switchButton}
        >
          <ChevronRight aria-hidden="true" className="size-3.5" />
        </button>
      </fieldset>
    ) : null;
  return (
    <li className={cn("relative", offscreen)}>
      <span className="sr-only">Assistant said:</span>
      <div
        className={cn(
          "space-y-3 rounded-lg border bg-card px-4 py-3 text-card-foreground",
          end?.kind === "failed" ? "border-destructive" : "border-border",
        )}
      >
        {message.parts.map((part, index) => {
          const key = `${message.id}-${index}`;
          if (part.type === "reasoning") {
            if (part.text.trim() === "") return null;
            return (
              <Reasoning
                key={key}
                text={part.text}
                answerStarted={answerStarted}
                streaming={streaming && part.state === "streaming"}
              />
            );
          }
          if (part.type === "text") {
            if (part.text === "") return null;
            return (
              <Markdown key={key} streaming={streaming && part.state === "streaming"}>
                {part.text}
              </Markdown>
            );
          }
          if (isToolPart(part)) {
            return (
              <ToolPartView
                key={part.toolCallId}
                part={part}
                onRespond={onRespond}
                disabled={closed || earlier !== undefined}
                approver={approver}
              />
            );
          }
          return null;
        })}
        {renderMeta?.(message)}
        {streaming ? null : (
          <ReplySources citations={readCitations(message.metadata)} openSource={openSource} />
        )}
        {streaming ? null : (
          <ReplyFooter
            message={message}
            end={earlier ? null : end}
            // An earlier version is a record: it is read, not regenerated.
            onRegenerate={earlier ? undefined : onRegenerate}
            renderStopAction={renderStopAction}
            showCost={showCost}
            before={switcher}
          />
        )}
      </div>
    </li>
  );
}

/** The bubble of a reply that failed before it had any message: the error, where the reply goes. */
export function FailedReply({ error }: { error: string }) {
  return (
    <li className={cn("relative", offscreen)}>
      <span className="sr-only">Assistant said:</span>
      <div
        role="alert"
        className="rounded-lg border border-destructive bg-card px-4 py-3 text-destructive text-sm"
      >
        <strong className="font-semibold">Failed</strong>
        {error ? `: ${error}` : null}
      </div>
    </li>
  );
}
