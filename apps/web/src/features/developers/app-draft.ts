import {
  type App,
  type CreateApp,
  createAppSchema,
  DEFAULT_MAX_TOKEN_LIFETIME_SECONDS,
  TOKEN_ALGORITHMS,
  type TokenAlgorithm,
  type TokenVerificationInput,
  type UpdateApp,
  updateAppSchema,
} from "@parley/shared";
import { dollarsInput, parseDollars } from "../../lib/money.ts";
import { type Problem, problemsOf, type Refusal, refusalOfProblems } from "../../lib/refusal.ts";
import { checkWith } from "./form-check.ts";

/**
 * An app's form as typed (strings, as the controls hold them) and its conversion to the API's
 * body, checked with the API's own schemas (`createAppSchema`, `updateAppSchema`) before sending.
 */

export type VerificationType = TokenVerificationInput["type"];

export interface VerificationDraft {
  type: VerificationType;
  alg: TokenAlgorithm;
  issuer: string;
  audience: string;
  maxTokenLifetimeSeconds: string;
  /** The tenant's public key as pasted: JSON of a JWK. */
  jwk: string;
  url: string;
}

export interface AppDraft {
  name: string;
  /** One origin per line. */
  origins: string;
  projectIds: string[];
  /** "": the project's own profile. */
  profileId: string;
  /** Dollars as typed; "" is no limit. */
  daily: string;
  weekly: string;
  monthly: string;
  showCost: boolean;
}

export const LIMIT_FIELDS = [
  ["daily", "endUserDailyLimitMicros"],
  ["weekly", "endUserWeeklyLimitMicros"],
  ["monthly", "endUserMonthlyLimitMicros"],
] as const;

/**
 * A new app's verification: a Parley secret, audience "parley" and issuer "my-server". The API
 * requires a verification method even of an app whose end-user tokens only ever come from
 * Parley with an API key (those are never checked against it), so the form fills one in that
 * such an app can keep, and says so; a server that signs its own tokens sets its own `iss`.
 */
export const DEFAULT_ISSUER = "my-server";

export const emptyVerification = (issuer = DEFAULT_ISSUER): VerificationDraft => ({
  type: "secret",
  alg: TOKEN_ALGORITHMS[0],
  issuer,
  audience: "parley",
  maxTokenLifetimeSeconds: String(DEFAULT_MAX_TOKEN_LIFETIME_SECONDS),
  jwk: "",
  url: "",
});

export const emptyApp = (projectIds: string[] = []): AppDraft => ({
  name: "",
  origins: "",
  projectIds,
  profileId: "",
  daily: "",
  weekly: "",
  monthly: "",
  showCost: false,
});

/** The form of a saved app. */
export function draftOf(app: App): AppDraft {
  return {
    name: app.name,
    origins: app.allowedOrigins.join("\n"),
    projectIds: [...app.projectIds],
    profileId: app.profileId ?? "",
    daily: dollarsInput(app.endUserDailyLimitMicros),
    weekly: dollarsInput(app.endUserWeeklyLimitMicros),
    monthly: dollarsInput(app.endUserMonthlyLimitMicros),
    showCost: app.showCost,
  };
}

export function verificationDraftOf(app: App): VerificationDraft {
  const v = app.verification;
  return {
    type: v.type,
    alg: v.type === "secret" ? TOKEN_ALGORITHMS[0] : v.alg,
    issuer: v.issuer,
    audience: v.audience,
    maxTokenLifetimeSeconds: String(v.maxTokenLifetimeSeconds),
    jwk: v.type === "public_key" ? JSON.stringify(v.jwk, null, 2) : "",
    url: v.type === "jwks" ? v.url : "",
  };
}

const lines = (text: string) =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");

type Converted<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };

/**
 * The limits as micro-dollars, and the problem of each one that is not an amount (that limit is
 * null in `value` then, so the rest of the form is still checked: every problem at once).
 */
function limitsOf(draft: AppDraft): { value: Record<string, number | null>; problems: Problem[] } {
  const value: Record<string, number | null> = {};
  const problems: Problem[] = [];
  for (const [key, field] of LIMIT_FIELDS) {
    const text = draft[key].trim();
    value[field] = null;
    if (text === "") continue;
    const parsed = parseDollars(text);
    if (parsed.ok) {
      value[field] = parsed.micros;
      continue;
    }
    problems.push({
      field,
      message:
        parsed.error === "precision"
          ? "must be whole micro-dollars: at most 6 decimals"
          : "must be an amount in dollars, like 5 or 2.50 (empty: no limit)",
    });
  }
  return { value, problems };
}

/** The `verification` body; a JWK that is not JSON is refused at `verification.jwk`. */
export function verificationOf(draft: VerificationDraft): Converted<unknown> {
  const lifetime = Number(draft.maxTokenLifetimeSeconds.trim());
  const rules = {
    issuer: draft.issuer.trim(),
    audience: draft.audience.trim(),
    maxTokenLifetimeSeconds: draft.maxTokenLifetimeSeconds.trim() === "" ? undefined : lifetime,
  };
  if (draft.type === "secret") return { ok: true, value: { type: "secret", ...rules } };
  if (draft.type === "jwks") {
    return { ok: true, value: { type: "jwks", alg: draft.alg, url: draft.url.trim(), ...rules } };
  }
  let jwk: unknown;
  try {
    jwk = JSON.parse(draft.jwk);
  } catch {
    return {
      ok: false,
      refusal: { field: "verification.jwk", message: 'must be a JSON Web Key, like {"kty": ...}' },
    };
  }
  return { ok: true, value: { type: "public_key", alg: draft.alg, jwk, ...rules } };
}

/**
 * The form's own problems, then the schema's for the rest of the body (none under a field the
 * form already refused: its stand-in value would only repeat it), as one refusal.
 */
function allProblems(own: Problem[], schemaRefusal: Refusal | null): Refusal | null {
  const covered = (field: string | null) =>
    own.some(
      (p) =>
        p.field !== null &&
        field !== null &&
        (field === p.field || field.startsWith(`${p.field}.`)),
    );
  return refusalOfProblems([
    ...own,
    ...problemsOf(schemaRefusal).filter((problem) => !covered(problem.field)),
  ]);
}

/** A new app's body, or every reason the API would refuse it. */
export function createInput(
  draft: AppDraft,
  verification: VerificationDraft,
): Converted<CreateApp> {
  const limits = limitsOf(draft);
  const v = verificationOf(verification);
  // A JWK that is not JSON: the rest of the verification (issuer, audience, ...) is still checked.
  const rest = verificationOf({ ...verification, type: "secret" });
  const body = {
    name: draft.name.trim(),
    allowedOrigins: lines(draft.origins),
    projectIds: draft.projectIds,
    verification: v.ok ? v.value : rest.ok ? rest.value : null,
    ...limits.value,
    showCost: draft.showCost,
    profileId: draft.profileId === "" ? null : draft.profileId,
  };
  const own = [...limits.problems, ...(v.ok ? [] : problemsOf(v.refusal))];
  const refusal = allProblems(own, checkWith(createAppSchema, body));
  return refusal ? { ok: false, refusal } : { ok: true, value: body as CreateApp };
}

/** The fields that changed from `app`, or why the API would refuse them; null: nothing changed. */
export function updateInput(app: App, draft: AppDraft): Converted<UpdateApp | null> {
  const limits = limitsOf(draft);
  const body: Record<string, unknown> = {};
  const name = draft.name.trim();
  if (name !== app.name) body.name = name;
  const origins = lines(draft.origins);
  if (origins.join("\n") !== app.allowedOrigins.join("\n")) body.allowedOrigins = origins;
  if (draft.projectIds.join() !== app.projectIds.join()) body.projectIds = draft.projectIds;
  const profileId = draft.profileId === "" ? null : draft.profileId;
  if (profileId !== app.profileId) body.profileId = profileId;
  for (const [, field] of LIMIT_FIELDS) {
    if (limits.value[field] !== app[field]) body[field] = limits.value[field];
  }
  if (draft.showCost !== app.showCost) body.showCost = draft.showCost;
  if (Object.keys(body).length === 0 && limits.problems.length === 0) {
    return { ok: true, value: null };
  }
  const refusal = allProblems(limits.problems, checkWith(updateAppSchema, body));
  return refusal ? { ok: false, refusal } : { ok: true, value: body as UpdateApp };
}

/** A new verification for a saved app (PATCH `verification`, replaced whole). */
export function verificationInput(draft: VerificationDraft): Converted<UpdateApp> {
  const v = verificationOf(draft);
  if (!v.ok) return v;
  const body = { verification: v.value };
  const refusal = checkWith(updateAppSchema, body);
  return refusal ? { ok: false, refusal } : { ok: true, value: body as UpdateApp };
}
