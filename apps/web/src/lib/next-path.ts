/**
 * Where to go after signing in: the signed-in page a signed-out visitor asked for, carried as
 * `?next=` on the sign-in page. Only a path of this app is taken (never another origin, `//host`,
 * a backslash trick or the auth pages themselves): anything else goes to the projects.
 */
export function safeNext(value: unknown): string | null {
  if (typeof value !== "string" || value.length > 2000) return null;
  if (!/^\/(?![/\\])/.test(value) || /[\s\\]/.test(value)) return null;
  const path = value.split(/[?#]/, 1)[0] ?? "";
  if (path === "/signin" || path === "/signup") return null;
  return value;
}
