import type { DynamicToolUIPart, ToolUIPart } from "ai";
import { Ban, Check, CircleAlert, Hourglass, LoaderCircle, Wrench } from "lucide-react";
import { type ReactNode, useState } from "react";
import { cn } from "./cn.ts";
import { toolNameOf, toolSourceOf } from "./tool-name.ts";
import type { ApprovalResponder } from "./use-parley-chat.ts";

/** A static or dynamic tool part of a message. */
export type AnyToolPart = ToolUIPart | DynamicToolUIPart;

const STATE_LABELS: Record<string, string> = {
  "input-streaming": "preparing",
  "input-available": "running",
  "approval-requested": "waiting for your approval",
  "approval-responded": "answered",
  "output-available": "done",
  "output-error": "failed",
  "output-denied": "denied",
};

/** A human label for a tool part's state; unknown states are shown as they are. */
export const toolStateLabel = (state: string): string => STATE_LABELS[state] ?? state;

/** The proposed change of `update_project_memory`, read defensively (the model wrote it). */
export function readMemoryChange(input: unknown): {
  set: [string, unknown][];
  remove: string[];
} {
  const record =
    typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
  const set =
    typeof record.set === "object" && record.set !== null && !Array.isArray(record.set)
      ? Object.entries(record.set as Record<string, unknown>)
      : [];
  const remove = Array.isArray(record.remove)
    ? record.remove.filter((key): key is string => typeof key === "string")
    : [];
  return { set, remove };
}

const approvalOf = (part: AnyToolPart): { id: string; approved?: boolean } | undefined => {
  const approval = (part as { approval?: unknown }).approval;
  if (typeof approval !== "object" || approval === null) return undefined;
  const { id, approved } = approval as { id?: unknown; approved?: unknown };
  if (typeof id !== "string") return undefined;
  return typeof approved === "boolean" ? { id, approved } : { id };
};

const STATE_ICONS: Record<string, ReactNode> = {
  "input-streaming": <LoaderCircle aria-hidden="true" className="size-4 animate-spin" />,
  "input-available": <LoaderCircle aria-hidden="true" className="size-4 animate-spin" />,
  "approval-requested": <Hourglass aria-hidden="true" className="size-4 text-warning" />,
  "approval-responded": <LoaderCircle aria-hidden="true" className="size-4 animate-spin" />,
  "output-available": <Check aria-hidden="true" className="size-4 text-success" />,
  "output-error": <CircleAlert aria-hidden="true" className="size-4 text-destructive" />,
  "output-denied": <Ban aria-hidden="true" className="size-4" />,
};

const buttonBase =
  "inline-flex items-center gap-1 rounded-md px-3 py-1.5 font-medium text-sm outline-none focus-visible:ring-2 focus-visible:ring-ring disabled:opacity-50";

function MemoryChange({ input }: { input: unknown }) {
  const { set, remove } = readMemoryChange(input);
  if (set.length === 0 && remove.length === 0) {
    return <p className="text-muted-foreground">No changes listed.</p>;
  }
  return (
    <div className="space-y-1">
      {set.length > 0 ? (
        <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-1">
          {set.map(([key, value]) => (
            <div key={key} className="contents">
              <dt className="font-medium">Set {key}</dt>
              <dd className="min-w-0 break-all font-mono text-xs">{JSON.stringify(value)}</dd>
            </div>
          ))}
        </dl>
      ) : null}
      {remove.length > 0 ? (
        <p>
          <span className="text-muted-foreground">Remove: </span>
          <span className="font-mono text-xs">{remove.join(", ")}</span>
        </p>
      ) : null}
    </div>
  );
}

/**
 * The approval card's layout (exported for its test): it fits any width down to a phone's embed
 * panel. Every argument a person approves is readable without sideways scrolling: the arguments
 * wrap (pre-wrap keeps the JSON's indentation) and break anywhere a long value or tool name has no
 * space; only a very long list scrolls, downwards.
 */
export const APPROVAL_CARD =
  "min-w-0 max-w-full space-y-3 rounded-lg border border-warning bg-card p-3 text-card-foreground text-sm [&>legend+*]:clear-both";
export const APPROVAL_TITLE = "float-left mb-3 w-full font-semibold [overflow-wrap:anywhere]";
export const WRAPPED_ARGUMENTS =
  "max-h-60 overflow-y-auto whitespace-pre-wrap rounded-md p-2 font-mono text-xs [overflow-wrap:anywhere]";

/**
 * A pending approval: what the assistant wants to do and Approve / Deny. Each answers only this
 * call's approval id, once (the buttons disable on the first click while the answer travels).
 */
export function ApprovalCard({
  part,
  approvalId,
  onRespond,
  disabled = false,
}: {
  part: AnyToolPart;
  approvalId: string;
  onRespond: ApprovalResponder;
  disabled?: boolean;
}) {
  const [answered, setAnswered] = useState(false);
  const name = toolNameOf(part);
  const source = toolSourceOf(part);
  const answer = (approved: boolean) => {
    setAnswered(true);
    onRespond({ id: approvalId, approved });
  };
  return (
    // A fieldset is as wide as its widest line by default (min-width: min-content) and draws its
    // legend across its border: in a narrow panel the card pushed past the chat and a wrapped title
    // sat on the border. min-w-0 lets it shrink; a floated legend is laid out inside the box like
    // any block (the group keeps its name), and what follows clears it.
    <fieldset className={APPROVAL_CARD}>
      <legend className={APPROVAL_TITLE}>
        {name === "update_project_memory"
          ? "The assistant wants to update the project memory."
          : source
            ? `The assistant wants to run ${name} on ${source}.`
            : `The assistant wants to run ${name}.`}
      </legend>
      {name === "update_project_memory" ? (
        <MemoryChange input={part.input} />
      ) : (
        <pre className={cn(WRAPPED_ARGUMENTS, "bg-muted")}>
          {JSON.stringify(part.input ?? {}, null, 2)}
        </pre>
      )}
      <div className="flex gap-2">
        <button
          type="button"
          disabled={disabled || answered}
          onClick={() => answer(true)}
          className={cn(buttonBase, "bg-primary text-primary-foreground hover:opacity-90")}
        >
          Approve
        </button>
        <button
          type="button"
          disabled={disabled || answered}
          onClick={() => answer(false)}
          className={cn(buttonBase, "border border-border bg-background hover:bg-accent")}
        >
          Deny
        </button>
      </div>
    </fieldset>
  );
}

/**
 * One tool call in a reply: its name and state (preparing, running, done, failed, denied), or the
 * approval card while the call waits for the person's answer.
 */
export function ToolPartView({
  part,
  onRespond,
  disabled = false,
  approver,
}: {
  part: AnyToolPart;
  onRespond: ApprovalResponder;
  /** The chat is closed: an approval can no longer be answered. */
  disabled?: boolean;
  /** Who answered the approval (the chat's owner), for its record. */
  approver?: string;
}) {
  const name = toolNameOf(part);
  const source = toolSourceOf(part);
  const approval = approvalOf(part);
  if (part.state === "approval-requested" && approval && approval.approved === undefined) {
    return (
      <ApprovalCard
        part={part}
        approvalId={approval.id}
        onRespond={onRespond}
        disabled={disabled}
      />
    );
  }
  // An answered approval leaves a record: what was asked, the answer, and who gave it. A call that
  // ran after an approval was approved (the SDK may keep only the approval's id by then).
  const answer =
    part.state === "output-denied" || approval?.approved === false
      ? "Denied"
      : approval
        ? "Approved"
        : null;
  if (answer) {
    return (
      <section
        aria-label={`${answer}: ${name}${source ? ` on ${source}` : ""}`}
        className="space-y-2 rounded-lg border border-border bg-muted px-3 py-2 text-muted-foreground text-sm"
      >
        <p className="flex items-start gap-2">
          <span className="mt-0.5 shrink-0">
            {STATE_ICONS[part.state] ?? <Wrench aria-hidden="true" className="size-4" />}
          </span>
          <span className="min-w-0 [overflow-wrap:anywhere]">
            <span className="font-medium text-foreground">
              {answer}
              {approver ? ` by ${approver}` : ""}
            </span>
            {": "}
            {name === "update_project_memory" ? (
              "a change to the project memory"
            ) : (
              <code className="font-mono text-foreground">{name}</code>
            )}
            {source ? ` on ${source}` : ""} (
            <span data-state={part.state}>{toolStateLabel(part.state)}</span>)
          </span>
        </p>
        {name === "update_project_memory" ? (
          <MemoryChange input={part.input} />
        ) : (
          <pre className={cn(WRAPPED_ARGUMENTS, "bg-background")}>
            {JSON.stringify(part.input ?? {}, null, 2)}
          </pre>
        )}
        {part.state === "output-error" ? (
          <p className="text-destructive">{part.errorText}</p>
        ) : null}
      </section>
    );
  }
  const errorText = part.state === "output-error" ? part.errorText : undefined;
  return (
    <div
      className={cn(
        "flex items-start gap-2 rounded-lg border bg-muted px-3 py-2 text-muted-foreground text-sm",
        part.state === "output-error" ? "border-destructive" : "border-border",
      )}
    >
      <span className="mt-0.5 shrink-0">
        {STATE_ICONS[part.state] ?? <Wrench aria-hidden="true" className="size-4" />}
      </span>
      <p className="min-w-0 [overflow-wrap:anywhere]">
        Tool call <code className="font-mono text-foreground">{name}</code>
        {source ? ` on ${source}` : ""}:{" "}
        <span data-state={part.state}>{toolStateLabel(part.state)}</span>
        {errorText ? <span className="block text-destructive">{errorText}</span> : null}
      </p>
    </div>
  );
}
