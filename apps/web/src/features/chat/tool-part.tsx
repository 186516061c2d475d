import { type DynamicToolUIPart, getToolName, type ToolUIPart } from "ai";

/** A static or dynamic tool part of a message. */
export type AnyToolPart = ToolUIPart | DynamicToolUIPart;

/** The approval decision the chat sends back (`addToolApprovalResponse`, i.e. cf_agent_tool_approval). */
export type ApprovalResponder = (response: { id: string; approved: boolean }) => void;

const STATE_LABELS: Record<string, string> = {
  "input-streaming": "preparing",
  "input-available": "running",
  "approval-requested": "waiting for your approval",
  "approval-responded": "answered",
  "output-available": "done",
  "output-error": "failed",
  "output-denied": "rejected",
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

/** The member's yes or no to a memory change the assistant proposed. */
export function MemoryApprovalPrompt({
  input,
  approvalId,
  onRespond,
}: {
  input: unknown;
  approvalId: string;
  onRespond: ApprovalResponder;
}) {
  const { set, remove } = readMemoryChange(input);
  return (
    <fieldset className="notice approval">
      <legend>
        <strong>The assistant wants to update the project memory.</strong>
      </legend>
      {set.length > 0 ? (
        <>
          <p className="muted">Set:</p>
          <dl className="kv">
            {set.map(([key, value]) => (
              <div key={key}>
                <dt>{key}</dt>
                <dd>
                  <code>{JSON.stringify(value)}</code>
                </dd>
              </div>
            ))}
          </dl>
        </>
      ) : null}
      {remove.length > 0 ? (
        <p>
          <span className="muted">Remove: </span>
          {remove.map((key, index) => (
            <span key={key}>
              {index > 0 ? ", " : ""}
              <code>{key}</code>
            </span>
          ))}
        </p>
      ) : null}
      {set.length === 0 && remove.length === 0 ? <p className="muted">No changes listed.</p> : null}
      <div className="actions">
        <button
          type="button"
          className="primary"
          onClick={() => onRespond({ id: approvalId, approved: true })}
        >
          Approve
        </button>
        <button type="button" onClick={() => onRespond({ id: approvalId, approved: false })}>
          Reject
        </button>
      </div>
    </fieldset>
  );
}

/** One tool call under a reply: its name and state, and the approval prompt when one is asked. */
export function ToolPartView({
  part,
  onRespond,
}: {
  part: AnyToolPart;
  onRespond: ApprovalResponder;
}) {
  const name = getToolName(part);
  const approval = approvalOf(part);
  if (part.state === "approval-requested" && approval && name === "update_project_memory") {
    return (
      <MemoryApprovalPrompt input={part.input} approvalId={approval.id} onRespond={onRespond} />
    );
  }
  return (
    <p className={`tool muted tool-${part.state}`}>
      Tool call: <code>{name}</code> · {toolStateLabel(part.state)}
      {part.state === "output-error" && "errorText" in part && part.errorText
        ? ` (${part.errorText})`
        : null}
    </p>
  );
}
