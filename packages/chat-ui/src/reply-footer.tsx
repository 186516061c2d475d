import type { UIMessage } from "ai";
import { Check, CircleAlert, Copy, RotateCcw, Square } from "lucide-react";
import { type ReactNode, useEffect, useRef, useState } from "react";
import { cn } from "./cn.ts";
import { formatMicros } from "./format.ts";
import { messageText } from "./protocol.ts";
import { type AssistantMeta, readAssistantMeta, type StopCode } from "./reply-meta.ts";
import { ReplyModel } from "./reply-model.tsx";

/** How a reply ended, as the view tells it: from the server's metadata or what this tab saw. */
export type ReplyEnd = { kind: "stopped"; reason?: string } | { kind: "failed"; error?: string };

const actionClass =
  "inline-flex items-center gap-1 rounded-md px-1.5 py-1 text-muted-foreground text-xs outline-none hover:bg-accent hover:text-foreground focus-visible:ring-2 focus-visible:ring-ring";

/** Copies a message's text to the clipboard, saying "Copied" for a moment after. */
export function CopyButton({ text, className }: { text: string; className?: string }) {
  const [copied, setCopied] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  return (
    <button
      type="button"
      className={cn(actionClass, className)}
      onClick={() => {
        navigator.clipboard.writeText(text).then(
          () => {
            setCopied(true);
            clearTimeout(timer.current);
            timer.current = setTimeout(() => setCopied(false), 1500);
          },
          () => setCopied(false),
        );
      }}
    >
      {copied ? (
        <Check aria-hidden="true" className="size-3.5" />
      ) : (
        <Copy aria-hidden="true" className="size-3.5" />
      )}
      <span aria-live="polite">{copied ? "Copied" : "Copy"}</span>
    </button>
  );
}

function Figures({ meta, showCost }: { meta: AssistantMeta; showCost: boolean }) {
  // A reply billing refused before any model call cost nothing and used no tokens: no figures.
  if (meta.code && !meta.priceMicros) return null;
  // Cost, tokens and steps are what the org is billed by: an app's end user (a shopper) sees none
  // of them unless the app shows cost (no support chat shows its customers either).
  if (!showCost) return null;
  const figures: string[] = [];
  if (meta.priceMicros !== undefined) {
    // The cost is the whole reply's, its tool calls' charges included; their part is named.
    const tools = meta.toolPriceMicros ? ` (tool calls ${formatMicros(meta.toolPriceMicros)})` : "";
    figures.push(`Cost ${formatMicros(meta.priceMicros)}${tools}`);
  }
  if (meta.tokens) {
    const tokens = meta.tokens.promptTokens + meta.tokens.completionTokens;
    figures.push(`${tokens.toLocaleString("en-US")} tokens`);
  }
  if (meta.steps !== undefined && meta.steps > 1) figures.push(`${meta.steps} steps`);
  if (figures.length === 0) return null;
  return <span className="text-muted-foreground text-xs">{figures.join(" · ")}</span>;
}

const STOP_WORDS: Record<StopCode, string> = {
  insufficient_credits: "Your organization is out of credits.",
  spend_limit: "A spend limit stopped this reply.",
};

/** Why billing stopped a reply, with the app's call to action (which differs per code). */
export function StopNotice({
  code,
  renderStopAction,
  said = false,
}: {
  code: StopCode;
  renderStopAction?: (code: StopCode) => ReactNode;
  /** The reply's own text already says why (the server's words): show only what to do. */
  said?: boolean;
}) {
  const action = renderStopAction?.(code);
  if (said && !action) return null;
  return (
    <div
      role="status"
      className="flex flex-wrap items-center gap-2 rounded-md border border-warning bg-muted px-3 py-2 text-sm"
    >
      <CircleAlert aria-hidden="true" className="size-4 text-warning" />
      {said ? null : <span>{STOP_WORDS[code]}</span>}
      {action}
    </div>
  );
}

/**
 * Under an assistant reply: why it stopped (billing notice, "Stopped", "Failed" with the error),
 * what it cost (sub-cent precision), its tokens and steps, and Copy / Regenerate. The cost shows
 * on stopped and failed replies too: they were charged for what was generated.
 */
export function ReplyFooter({
  message,
  end,
  onRegenerate,
  renderStopAction,
  showCost = true,
  showModel = showCost,
  before,
}: {
  message: UIMessage;
  /** At the start of the actions row (a regenerated reply's version switcher). */
  before?: ReactNode;
  end?: ReplyEnd | null;
  /** Offered on the last reply only, when regenerating is enabled and possible. */
  onRegenerate?: () => void;
  renderStopAction?: (code: StopCode) => ReactNode;
  /** Include the reply's cost in its figures (tokens and steps show either way). */
  showCost?: boolean;
  /**
   * Name the model and profile version the reply ran with (issue 29). Where cost shows, by
   * default: a member who picks a model sees what it charged; an app's end user never picks.
   */
  showModel?: boolean;
}) {
  const meta = readAssistantMeta(message.metadata);
  const text = messageText(message);
  return (
    <div className="mt-2 space-y-2">
      {meta.code ? (
        <StopNotice code={meta.code} renderStopAction={renderStopAction} said={text !== ""} />
      ) : null}
      {end?.kind === "failed" ? (
        <div
          role="alert"
          className="flex items-start gap-1.5 rounded-md border border-destructive px-2 py-1.5 text-destructive text-sm"
        >
          <CircleAlert aria-hidden="true" className="mt-0.5 size-4 shrink-0" />
          <span>
            <strong className="font-semibold">Failed</strong>
            {end.error ? `: ${end.error}` : null}
          </span>
        </div>
      ) : null}
      <div className="flex flex-wrap items-center gap-x-2 gap-y-1">
        {end?.kind === "stopped" ? (
          <span className="inline-flex items-center gap-1 font-medium text-warning text-xs">
            <Square aria-hidden="true" className="size-3" />
            Stopped
            {end.reason ? <span className="font-normal">: {end.reason}</span> : null}
          </span>
        ) : null}
        {showModel ? <ReplyModel metadata={message.metadata} /> : null}
        <Figures meta={meta} showCost={showCost} />
        <span className="ml-auto flex items-center gap-1">
          {before}
          {text !== "" ? <CopyButton text={text} /> : null}
          {onRegenerate ? (
            <button type="button" className={actionClass} onClick={onRegenerate}>
              <RotateCcw aria-hidden="true" className="size-3.5" />
              Regenerate
            </button>
          ) : null}
        </span>
      </div>
    </div>
  );
}
