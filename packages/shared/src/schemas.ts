import { z } from "zod";
import { instant } from "./billing.ts";
import { jsonValueProblem } from "./json.ts";

/** Roles of a member in an organization, from most to least privileged. */
export const roleSchema = z.enum(["owner", "admin", "member"]);
export type Role = z.infer<typeof roleSchema>;

const email = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .pipe(z.email({ message: "must be a valid email address" }));

// Refused in text people type, rather than stripped, so what is stored is what they see:
const LONE_SURROGATE = /\p{Cs}/u; // half of a UTF-16 pair: D1 would store U+FFFD instead
// What a decoder puts where bytes were not UTF-8 (request bodies are decoded with replacement): what
// was typed is already lost, and two different byte strings would become the same name.
const REPLACEMENT_CHARACTER = /\uFFFD/u;
const CONTROL_SINGLE_LINE = /[\p{Cc}\u2028\u2029]/u; // tabs and line breaks included
const CONTROL_MULTI_LINE = /(?![\t\n\r])[\p{Cc}\u2028\u2029]/u; // the same but \t \n \r
// Embeddings, overrides and isolates reorder what follows them ("Trojan Source" names); the marks
// (LRM, RLM, the Arabic letter mark) are invisible and change how neighbouring characters order.
const BIDI_CONTROL = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
const BIDI_CHARACTERS = "U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069";
// Whitespace, format characters (zero-width space and joiners, BOM, soft hyphen), blank fillers,
// and combining marks, which show only on a base character: marks alone are nothing visible
// ("\u00AD\u034F", a soft hyphen and a combining grapheme joiner, looked like an empty name).
const INVISIBLE_ONLY = /^[\s\p{Cf}\p{M}\u115F\u1160\u3164\uFFA0\u2800]+$/u;
// A mark before any base would attach to whatever a page shows in front of the text.
const LEADING_MARK = /^\s*\p{M}/u;

/**
 * A title made from text someone typed elsewhere (a session's first message): control and bidi
 * characters become spaces, whitespace runs collapse, and it is cut to `max` code points (never
 * inside a surrogate pair). Null when nothing visible is left.
 */
export function titleFrom(text: string, max: number): string | null {
  const cleaned = text
    .replace(/[\p{Cs}\uFFFD\u061C\u200E\u200F]/gu, "")
    .replace(/[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/gu, " ")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^\p{M}+/u, "")
    .normalize("NFC");
  const cut = [...cleaned].slice(0, max).join("").trim();
  return cut === "" || INVISIBLE_ONLY.test(cut) ? null : cut;
}

/** Why `value` is not acceptable human-readable text, or null. */
export function textProblem(value: string, options: { multiline?: boolean } = {}): string | null {
  if (LONE_SURROGATE.test(value)) {
    return "must be valid Unicode text (it has an unpaired surrogate)";
  }
  if (REPLACEMENT_CHARACTER.test(value)) {
    return "must be valid UTF-8 text (it has U+FFFD, what bytes that are not UTF-8 decode to)";
  }
  if ((options.multiline ? CONTROL_MULTI_LINE : CONTROL_SINGLE_LINE).test(value)) {
    return options.multiline
      ? "must not contain control characters"
      : "must be a single line without control characters (no tabs or line breaks)";
  }
  if (BIDI_CONTROL.test(value)) {
    return `must not contain bidirectional control characters (${BIDI_CHARACTERS})`;
  }
  if (INVISIBLE_ONLY.test(value) && value.trim() !== "") return "must contain visible characters";
  if (LEADING_MARK.test(value)) return "must not start with a combining mark";
  return null;
}

/**
 * Text a person types (names, titles, reasons): refused when it carries control characters, an
 * unpaired surrogate, bidi controls or nothing visible; then trimmed and normalized to NFC, so the
 * same name typed on two keyboards is the same string. Lengths count the normalized text.
 */
export function humanText(options: { min: number; max: number; multiline?: boolean }) {
  return z
    .string()
    .superRefine((value, ctx) => {
      const problem = textProblem(value, options);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .transform((value) => value.normalize("NFC").trim())
    .pipe(z.string().min(options.min).max(options.max));
}

const displayName = humanText({ min: 1, max: 100 });
// A password is taken as typed, spaces and all, but must be real Unicode: an unpaired surrogate
// would be hashed as U+FFFD, so two different passwords would match each other.
const password = z
  .string()
  .min(10, "must be at least 10 characters")
  .max(256)
  .refine((value) => !LONE_SURROGATE.test(value), {
    message: "must be valid Unicode text (it has an unpaired surrogate)",
  })
  // Likewise bytes that are not UTF-8: they arrive as U+FFFD, so different byte strings would be
  // one password. Only at sign-up: a login must still work for a password chosen before this rule.
  .refine((value) => !REPLACEMENT_CHARACTER.test(value), {
    message: "must be valid UTF-8 text (it has U+FFFD, what bytes that are not UTF-8 decode to)",
  });

export const signupSchema = z
  .strictObject({
    email,
    password,
    name: displayName,
    orgName: displayName.optional(),
    /**
     * The secret of the invitation link the person signs up through (2026-12-06): the account
     * gets no organization of its own (it joins the inviting one by accepting the link), and the
     * email must be the invited one.
     */
    invitation: z.string().min(1).max(200).optional(),
  })
  .refine((input) => input.invitation === undefined || input.orgName === undefined, {
    message: "an account made through an invitation gets no organization of its own",
    path: ["orgName"],
  });
export type Signup = z.infer<typeof signupSchema>;

/** A password as typed to prove who one is: any password chosen before today's rules still works. */
const typedPassword = z
  .string()
  .min(1)
  .max(256)
  .refine((value) => !LONE_SURROGATE.test(value), {
    message: "must be valid Unicode text (it has an unpaired surrogate)",
  });

export const loginSchema = z.strictObject({ email, password: typedPassword });
export type Login = z.infer<typeof loginSchema>;

/**
 * `PATCH /api/me` (2026-12-02): a new display name and/or email. A new email needs the current
 * password: a stolen access token alone must not be enough to take the account over.
 */
export const updateMeSchema = z
  .strictObject({
    name: displayName.optional(),
    email: email.optional(),
    currentPassword: typedPassword.optional(),
  })
  .refine((value) => value.name !== undefined || value.email !== undefined, {
    message: "give a name or an email to change",
  })
  .refine((value) => value.email === undefined || value.currentPassword !== undefined, {
    message: "changing the email needs the current password",
    path: ["currentPassword"],
  });
export type UpdateMe = z.infer<typeof updateMeSchema>;

/** `POST /api/me/password` (2026-12-02): the new password follows the sign-up rules. */
export const changePasswordSchema = z.strictObject({
  currentPassword: typedPassword,
  newPassword: password,
});
export type ChangePassword = z.infer<typeof changePasswordSchema>;

export const createOrgSchema = z.strictObject({ name: displayName });
export type CreateOrg = z.infer<typeof createOrgSchema>;

export const addMemberSchema = z.strictObject({ email, role: roleSchema });
export type AddMember = z.infer<typeof addMemberSchema>;

export const updateMemberSchema = z.strictObject({ role: roleSchema });
export type UpdateMember = z.infer<typeof updateMemberSchema>;

/** An invitation by link, for someone who may not have an account yet (2026-12-02). */
export const createInvitationSchema = z.strictObject({ email, role: roleSchema });
export type CreateInvitation = z.infer<typeof createInvitationSchema>;

/**
 * An invitation link's secret, sent in the body (never in a path or query, which request logs
 * keep). Its shape is checked where it is looked up: a malformed secret is an unknown one (404).
 */
export const invitationTokenSchema = z.strictObject({ token: z.string().min(1).max(200) });
export type InvitationToken = z.infer<typeof invitationTokenSchema>;

/** Largest serialized project memory, in bytes of UTF-8 JSON. The assistant reads all of it each turn. */
export const MAX_MEMORY_BYTES = 16 * 1024;

const MAX_MEMORY_KEY_CHARS = 100;

/** Why a top-level memory key is refused (it is one line of visible text, like a name), or null. */
function memoryKeyProblem(key: string, normalized: string): string | null {
  const problem = textProblem(key);
  if (problem) return problem;
  if (normalized === "") return "a key must not be empty";
  if (normalized.length > MAX_MEMORY_KEY_CHARS) {
    return `a key must be at most ${MAX_MEMORY_KEY_CHARS} characters`;
  }
  return null;
}

/**
 * Why a string inside a memory value cannot be stored as sent, or null. Values keep any text
 * (several lines, tabs, any script) but NUL (C-based tools and some model providers cut or refuse
 * text at it) and unpaired surrogates (not encodable as UTF-8: the assistant, the web app and any
 * export would see U+FFFD instead).
 */
function unstorable(text: string): string | null {
  if (text.includes("\u0000")) return "must not contain NUL characters (U+0000)";
  if (LONE_SURROGATE.test(text)) return "must be valid Unicode text (it has an unpaired surrogate)";
  return null;
}

/** The first string in a memory value (a string leaf, or a nested key) that cannot be stored. */
function memoryValueProblem(value: object): { path: (string | number)[]; message: string } | null {
  // Iterative like jsonValueProblem, which has already bounded the depth.
  const stack: { node: unknown; path: (string | number)[] }[] = [{ node: value, path: [] }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { node, path } = next;
    if (typeof node === "string") {
      const problem = unstorable(node);
      if (problem) return { path, message: problem };
      continue;
    }
    if (typeof node !== "object" || node === null) continue;
    const entries: [string | number, unknown][] = Array.isArray(node)
      ? node.map((child, i) => [i, child])
      : Object.entries(node);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i] as [string | number, unknown];
      // Top-level keys follow the rules of names (memoryKeyProblem); nested keys are data.
      const keyProblem = typeof key === "string" && path.length > 0 ? unstorable(key) : null;
      if (keyProblem) return { path: [...path, key], message: `a key ${keyProblem}` };
      stack.push({ node: child, path: [...path, key] });
    }
  }
  return null;
}

/**
 * Project memory: a small JSON object the assistant reads as context and updates through a tool.
 * Its size is checked separately (`memoryTooLarge`) so the caller gets `payload_too_large`.
 * Before zod's recursive `z.json()` sees it, the value is walked without recursion: too deep a
 * nesting or a `__proto__` key (which the record would drop silently) is refused. Top-level keys
 * follow the rules of names (checked here, where the message can say why: a record reports only
 * "Invalid key"), are stored trimmed and in NFC, and two keys that would become one are refused.
 * Values keep any text but NUL and unpaired surrogates (`memoryValueProblem`).
 */
export const memorySchema = z.preprocess(
  (value, ctx) => {
    const refuse = (message: string, path: (string | number)[]) => {
      ctx.addIssue({ code: "custom", message, path, input: value });
      return z.NEVER;
    };
    const problem = jsonValueProblem(value);
    if (problem) return refuse(problem.message, problem.path);
    if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
    const valueProblem = memoryValueProblem(value);
    if (valueProblem) return refuse(valueProblem.message, valueProblem.path);
    const seen = new Map<string, string>();
    for (const key of Object.keys(value)) {
      const normalized = key.normalize("NFC").trim();
      const keyProblem = memoryKeyProblem(key, normalized);
      if (keyProblem) return refuse(keyProblem, [key]);
      const other = seen.get(normalized);
      if (other !== undefined) {
        return refuse(`is the same key as ${JSON.stringify(other)} once normalized`, [key]);
      }
      seen.set(normalized, key);
    }
    return value;
  },
  z.record(
    z.string().transform((key) => key.normalize("NFC").trim()),
    z.json(),
  ),
);
export type Memory = z.infer<typeof memorySchema>;

export function memoryBytes(memory: Memory): number {
  return new TextEncoder().encode(JSON.stringify(memory)).byteLength;
}

export const createProjectSchema = z.strictObject({
  name: displayName,
  memory: memorySchema.optional(),
});
export type CreateProject = z.infer<typeof createProjectSchema>;

/** A profile of the project's org, or null for none (2026-12-06). */
const profileRef = z.string().min(1).max(100).nullable();

/**
 * Any member renames a project or replaces its memory; owners and admins also choose its
 * assistant: the default profile of its sessions and the profile of its onboarding preview.
 */
export const updateProjectSchema = z
  .strictObject({
    name: displayName.optional(),
    memory: memorySchema.optional(),
    defaultProfileId: profileRef.optional(),
    previewProfileId: profileRef.optional(),
  })
  .refine((value) => Object.values(value).some((v) => v !== undefined), {
    message: "at least one of name, memory, defaultProfileId or previewProfileId is required",
  });
export type UpdateProject = z.infer<typeof updateProjectSchema>;

/**
 * What an org's server API key may do (2026-12-02, docs/2026-12-02-api-keys.md). One list, so a
 * feature that lets keys do something new adds its scope here; a scope not in it is refused (400).
 */
export const API_KEY_SCOPES = [
  "end_users:token",
  "sessions:read",
  "usage:read",
  "end_users:erase",
] as const;
export const apiKeyScopeSchema = z.enum(API_KEY_SCOPES);
export type ApiKeyScope = z.infer<typeof apiKeyScopeSchema>;

/**
 * A new key: a name people recognize it by, at least one scope (each once), an optional expiry (a
 * date or an ISO timestamp, like usage windows; the route refuses one that is not in the future).
 */
export const createApiKeySchema = z.strictObject({
  name: displayName,
  scopes: z
    .array(apiKeyScopeSchema)
    .min(1)
    .max(API_KEY_SCOPES.length)
    .refine((scopes) => new Set(scopes).size === scopes.length, {
      message: "must not name a scope twice",
    }),
  /** When the key stops working; absent or null: never (as the key itself reads it back). */
  expiresAt: instant.nullable().optional(),
});
export type CreateApiKey = z.infer<typeof createApiKeySchema>;

/** What the API returns for each resource. */
export interface User {
  id: string;
  email: string;
  name: string;
  createdAt: string;
}

export interface OrgSummary {
  id: string;
  name: string;
  role: Role;
  createdAt: string;
}

export interface Member {
  userId: string;
  email: string;
  name: string;
  role: Role;
  joinedAt: string;
}

/**
 * Someone who was a member of the org and is not any more (removed, or left), and whose data in
 * it is not erased yet: what an admin erases them by (`GET /api/orgs/:orgId/former-members`).
 */
export interface FormerMember {
  userId: string;
  email: string;
  name: string;
  /** When they last left (or were removed). */
  leftAt: string;
}

export interface Project {
  id: string;
  orgId: string;
  name: string;
  memory: Memory;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
  /** The profile of its members' and end users' sessions; null: Parley's default assistant. */
  defaultProfileId: string | null;
  /** The profile of its onboarding preview; null: the org's, else Parley's default preview. */
  previewProfileId: string | null;
}

export interface Session {
  id: string;
  projectId: string;
  orgId: string;
  ownerId: string;
  /** The owner's display name (or email), for lists that show everyone's sessions. */
  ownerLabel: string;
  /** From the first exchange, unless given at creation or renamed. */
  title: string | null;
  createdAt: string;
  updatedAt: string;
  /** The last turn, or the creation when there was none. */
  lastActivityAt: string;
  /** What the session's model calls cost the org so far (price charged, with markup). */
  spendMicros: number;
  /** The model its owner picked; null: the profile's (2026-12-06). */
  model: string | null;
}

export interface Invitation {
  id: string;
  orgId: string;
  email: string;
  role: Role;
  /** `pending` until accepted, revoked or past `expiresAt`. */
  status: "pending" | "accepted" | "revoked" | "expired";
  createdAt: string;
  expiresAt: string;
  /** Only in the response that created it: the link to send, holding the invitation's secret. */
  url?: string;
}

/** What the link shows before anyone signs in: which org, which role, for which email. */
export interface InvitationPreview {
  orgName: string;
  email: string;
  role: Role;
  expiresAt: string;
}

/** An org's API key as every answer shows it: never its secret, nor a hash of it. */
export interface ApiKey {
  id: string;
  name: string;
  /** The key's first characters (`prly_sk_` and its public id), to tell keys apart. */
  prefix: string;
  scopes: ApiKeyScope[];
  /** The member who made it (their pseudonym once erased; null when none). */
  createdBy: string | null;
  createdAt: string;
  /** The last request it authenticated, to the minute. */
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
}

/** The answer to creating a key: the only time `secret` (the whole key, to send as a bearer) is shown. */
export interface CreatedApiKey extends ApiKey {
  secret: string;
}

export interface AuthResult {
  accessToken: string;
  expiresIn: number;
  user: { id: string; email: string; name: string };
}

export interface Me extends User {
  orgs: OrgSummary[];
}

export const erasureRequestSchema = z.strictObject({
  subject: z.strictObject({
    type: z.enum(["member", "project", "session"]),
    id: z.string().min(1).max(100),
  }),
  // Several lines are fine in a reason (tabs and line breaks pass); other controls do not.
  reason: humanText({ min: 0, max: 500, multiline: true }).optional(),
});
export type ErasureRequestInput = z.infer<typeof erasureRequestSchema>;

/** Erasing one's own account must be confirmed explicitly, orgs one alone belongs to included. */
export const deleteAccountSchema = z.strictObject({ confirm: z.literal(true) });
