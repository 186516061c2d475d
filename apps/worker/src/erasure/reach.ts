import type { ErasurePlan } from "./plan.ts";
import { pseudonym } from "./pseudonym.ts";
import type { Allowance, ScanOptions } from "./scan.ts";
import type { Replacement } from "./scrub.ts";

/**
 * What an erasure reaches, the same for its scrub (steps.ts) and its verification scan: the
 * replacements of a person's identifiers, the rows in scope, and what may stay by design.
 */

export async function personReplacements(env: Env, plan: ErasurePlan): Promise<Replacement[]> {
  if (!plan.userId) return [];
  return [
    { find: plan.userId, replace: await pseudonym(env.ERASURE_HASH_KEY, plan.userId) },
    ...(plan.email ? [{ find: plan.email, replace: "[erased]" }] : []),
  ];
}

/**
 * Erasure requests still running hold their subject and plan until they complete (then drop both):
 * those two cells are left out of the scrub and the scan, this request's included.
 */
const IN_FLIGHT = {
  erasure_requests: {
    columns: ["subject_id", "plan"],
    where: "status IN ('pending', 'running')",
    bindings: [],
  },
};

/**
 * What of D1 a person's erasure reaches, the same for the scrub and the scan: everything for an
 * account; for a member, their org's rows, the org itself and its members' profiles (a colleague's
 * display name is shown to the whole org).
 */
export function personReach(plan: ErasurePlan): Omit<ScanOptions, "needles"> {
  const org = plan.membershipOrgId;
  if (!org) return { excludeCells: IN_FLIGHT };
  return {
    orgId: org,
    scopes: {
      organizations: { where: "id = ?", bindings: [org] },
      users: {
        where: "id IN (SELECT user_id FROM memberships WHERE org_id = ?)",
        bindings: [org],
      },
    },
    excludeCells: IN_FLIGHT,
  };
}

/** What of D1 an object's erasure reaches: everything but its tombstone. */
export const objectReach = (): Omit<ScanOptions, "needles"> => ({
  excludeCells: IN_FLIGHT,
  allow: OBJECT_ALLOWANCES,
});

/** Where an erased identifier may stay by design (docs/ on data retention says why and how long). */
const OBJECT_ALLOWANCES: readonly Allowance[] = [
  // The tombstone is the id and nothing else: it makes the Worker answer 410 and never recreate the
  // object.
  { table: "tombstones", column: "subject_id", why: "tombstone of an erased object" },
];
