import { z } from "zod";

/** Roles of a member in an organization, from most to least privileged. */
export const roleSchema = z.enum(["owner", "admin", "member"]);
export type Role = z.infer<typeof roleSchema>;

const email = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .pipe(z.email({ message: "must be a valid email address" }));
const displayName = z.string().trim().min(1).max(100);
const password = z.string().min(10, "must be at least 10 characters").max(256);

export const signupSchema = z.strictObject({
  email,
  password,
  name: displayName,
  orgName: displayName.optional(),
});
export type Signup = z.infer<typeof signupSchema>;

export const loginSchema = z.strictObject({
  email,
  password: z.string().min(1).max(256),
});
export type Login = z.infer<typeof loginSchema>;

export const createOrgSchema = z.strictObject({ name: displayName });
export type CreateOrg = z.infer<typeof createOrgSchema>;

export const addMemberSchema = z.strictObject({ email, role: roleSchema });
export type AddMember = z.infer<typeof addMemberSchema>;

export const updateMemberSchema = z.strictObject({ role: roleSchema });
export type UpdateMember = z.infer<typeof updateMemberSchema>;

/** Largest serialized project memory, in bytes of UTF-8 JSON. The assistant reads all of it each turn. */
export const MAX_MEMORY_BYTES = 16 * 1024;

/**
 * Project memory: a small JSON object the assistant reads as context and updates through a tool.
 * Its size is checked separately (`memoryTooLarge`) so the caller gets `payload_too_large`.
 */
export const memorySchema = z.record(z.string().min(1).max(100), z.json());
export type Memory = z.infer<typeof memorySchema>;

export function memoryBytes(memory: Memory): number {
  return new TextEncoder().encode(JSON.stringify(memory)).byteLength;
}

export const createProjectSchema = z.strictObject({
  name: displayName,
  memory: memorySchema.optional(),
});
export type CreateProject = z.infer<typeof createProjectSchema>;

export const updateProjectSchema = z
  .strictObject({ name: displayName.optional(), memory: memorySchema.optional() })
  .refine((value) => value.name !== undefined || value.memory !== undefined, {
    message: "at least one of name or memory is required",
  });
export type UpdateProject = z.infer<typeof updateProjectSchema>;

export const createSessionSchema = z.strictObject({
  title: z.string().trim().min(1).max(200).optional(),
});
export type CreateSession = z.infer<typeof createSessionSchema>;

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

export interface Project {
  id: string;
  orgId: string;
  name: string;
  memory: Memory;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Session {
  id: string;
  projectId: string;
  orgId: string;
  ownerId: string;
  /** From the first exchange, unless given at creation. */
  title: string | null;
  createdAt: string;
  updatedAt: string;
  /** The last turn, or the creation when there was none. */
  lastActivityAt: string;
  /** What the session's model calls cost the org so far (price charged, with markup). */
  spendMicros: number;
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
  reason: z.string().trim().max(500).optional(),
});
export type ErasureRequestInput = z.infer<typeof erasureRequestSchema>;

/** Erasing one's own account must be confirmed explicitly, orgs one alone belongs to included. */
export const deleteAccountSchema = z.strictObject({ confirm: z.literal(true) });
