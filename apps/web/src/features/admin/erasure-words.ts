import type { ErasureRequest, ErasureStatus, ErasureStep } from "../../lib/api.ts";

/** What can be erased from this screen (an account is erased from the account page). */
export type SubjectType = "member" | "project" | "session";

export const SUBJECT_TYPES: { value: SubjectType; label: string }[] = [
  { value: "member", label: "Member" },
  { value: "project", label: "Project" },
  { value: "session", label: "Session" },
];

const subjectNouns: Record<string, string> = {
  member: "member",
  project: "project",
  session: "session",
  account: "account",
};

/**
 * The subject of a request in words: its name while this tab still knows it, else "Erased
 * member" (the server keeps only a keyed hash of the subject, never its id or name, once filed).
 */
export function subjectWords(type: string, label: string | undefined): string {
  const noun = subjectNouns[type] ?? "subject";
  return label ? label : `Erased ${noun}`;
}

/**
 * The job's steps (apps/worker/src/erasure/steps.ts, `STEP_NAMES`) in the words of the store each
 * clears. `d1` is the directory: what it removes depends on the subject.
 */
export function stepWords(name: string, subjectType: string): string {
  switch (name) {
    case "agents":
      return "Chat transcripts";
    case "exports":
      return "Data exports holding it";
    case "knowledge":
      return "Knowledge documents and their index";
    case "d1":
      if (subjectType === "project") return "Project, its memory and its sessions";
      if (subjectType === "session") return "Session record";
      return "Account and memberships";
    case "tools":
      return "Tool call records";
    case "ledger":
      return "Billing ledger (pseudonymised)";
    case "audit":
      return "Audit log (pseudonymised)";
    case "stripe":
      return "Payment provider";
    case "verify":
      return "Verification scan";
    default:
      return name.charAt(0).toUpperCase() + name.slice(1);
  }
}

export const statusWords: Record<
  ErasureStatus,
  { label: string; tone: "neutral" | "info" | "success" | "danger" }
> = {
  pending: { label: "Queued", tone: "neutral" },
  running: { label: "Running", tone: "info" },
  completed: { label: "Completed", tone: "success" },
  failed: { label: "Failed", tone: "danger" },
};

export const stepStatusWords: Record<ErasureStep["status"], string> = {
  pending: "Waiting",
  done: "Done",
  skipped: "Nothing to erase",
  failed: "Failed",
};

export const isActive = (request: Pick<ErasureRequest, "status">): boolean =>
  request.status === "pending" || request.status === "running";

/** Steps settled (done or skipped) out of all, for the progress bar. */
export function progress(request: Pick<ErasureRequest, "steps">): { done: number; total: number } {
  const done = request.steps.filter(
    (step) => step.status === "done" || step.status === "skipped",
  ).length;
  return { done, total: request.steps.length };
}
