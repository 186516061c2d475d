import type { Member, Role } from "@parley/shared";

/** Roles from most to least privileged, as the selects list them. */
export const ROLES: readonly Role[] = ["owner", "admin", "member"];

export const roleWords: Record<Role, string> = {
  owner: "Owner",
  admin: "Admin",
  member: "Member",
};

/** A role with its article, for a sentence: "an owner", "an admin", "a member". */
export const withArticle = (role: Role): string =>
  `${role === "member" ? "a" : "an"} ${roleWords[role].toLowerCase()}`;

/** How a member is named on screen: their name, or their email when they gave none. */
export const memberName = (member: Pick<Member, "name" | "email">): string =>
  member.name.trim() || member.email;

/**
 * The roles `actor` may give when adding someone: admins add members and admins, only owners add
 * owners (the same rule as `POST /api/orgs/:orgId/members`).
 */
export function rolesToGrant(actor: Role): Role[] {
  if (actor === "owner") return [...ROLES];
  if (actor === "admin") return ["admin", "member"];
  return [];
}

/**
 * The roles `actor` may move `target` between, or none when they may not change it at all. From
 * `PATCH /api/orgs/:orgId/members/:userId`: members change no roles (not even their own); admins
 * move people between member and admin, never to or from owner; owners change anyone. Demoting
 * the last owner is refused by the server (409), which knows how many owners there are.
 */
export function rolesToChange(actor: Role, target: Role): Role[] {
  if (actor === "owner") return [...ROLES];
  if (actor === "admin" && target !== "owner") return ["admin", "member"];
  return [];
}

/**
 * Whether `actor` may remove someone else with role `target` (leaving is anyone's own choice):
 * admins remove members and admins, only owners remove owners.
 */
export function mayRemove(actor: Role, target: Role): boolean {
  if (actor === "owner") return true;
  return actor === "admin" && target !== "owner";
}

/**
 * Whether `userId` is the organization's only owner, so may neither leave nor give up the role
 * (the server refuses both with 409). Known only once every member has loaded (`complete`);
 * until then the server's answer says so.
 */
export function isLastOwner(
  members: readonly Pick<Member, "userId" | "role">[],
  complete: boolean,
  userId: string | undefined,
): boolean {
  if (!complete || userId === undefined) return false;
  const owners = members.filter((member) => member.role === "owner");
  return owners.length === 1 && owners[0]?.userId === userId;
}
