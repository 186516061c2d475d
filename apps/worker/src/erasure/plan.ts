/** What an erasure reaches, resolved when it is filed (the rows it names are deleted as it runs). */
export interface ErasurePlan {
  /** The member or account being erased, if any. */
  userId: string | null;
  /** Orgs whose stores hold the member's identity (ledger, audit). */
  orgIds: string[];
  projectIds: string[];
  sessionIds: string[];
  /** Orgs erased whole (an account's orgs it alone belonged to). */
  deleteOrgIds: string[];
  /** For a member erasure: the org they leave. */
  membershipOrgId: string | null;
  /**
   * Projects (not erased themselves) of the orgs the person leaves whose shared onboarding chat
   * has been used (D1 `preview_authors`): the person's messages are removed there, and their id and
   * email scrubbed from what others wrote. Absent in plans filed before 2026-12-01.
   */
  chatProjectIds?: string[];
  /**
   * The member's or account's email, for the verification scan and for scrubbing free text (an
   * erasure reason that names them). Held only while the job runs: the plan is cleared when done.
   */
  email?: string | null;
}

export type SubjectType = "member" | "project" | "session" | "account";

export type StepName =
  | "agents"
  | "exports"
  | "knowledge"
  | "tools"
  | "d1"
  | "ledger"
  | "audit"
  | "stripe"
  | "verify";
/**
 * `exports` (2026-12-02) deletes the data exports whose archives hold what is erased; it runs
 * before `d1`, which deletes the session rows it reads to find their owners' exports.
 * `knowledge` (2026-12-06) erases the projects' documents and indexes (their KnowledgeBase
 * objects) and pseudonymizes the uploader; requests filed before it have no such step. `tools`
 * (2026-12-06, issue 30) deletes the tool call records of the erased sessions, projects and
 * people, and an org's sources and calls when it is erased whole.
 */
export const STEP_NAMES: StepName[] = [
  "agents",
  "exports",
  "knowledge",
  "tools",
  "d1",
  "ledger",
  "audit",
  "stripe",
  "verify",
];

export interface Step {
  name: StepName;
  status: "pending" | "done" | "skipped" | "failed";
  at: string | null;
  detail: string | null;
}

export interface ErasureRequestRow {
  id: string;
  org_id: string | null;
  requested_by: string;
  subject_type: SubjectType;
  subject_hash: string;
  subject_id: string | null;
  plan: string | null;
  legal_basis: string;
  reason: string | null;
  status: "pending" | "running" | "completed" | "failed";
  steps: string;
  verification: string | null;
  attempts: number;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
}
