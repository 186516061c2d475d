/**
 * Identifier prefixes. Ids are `<prefix>_<26 chars>`: 10 characters of creation time then 16 random
 * ones, in Crockford base32, so ids sort by creation time and a list can page on the id alone.
 */
export const idPrefix = {
  user: "usr",
  org: "org",
  project: "prj",
  session: "ses",
  refreshToken: "rft",
  audit: "aud",
  erasure: "era",
  invitation: "inv",
  app: "app",
  /** A signing secret of an app: its id is the `kid` a tenant puts in its tokens' header. */
  appSecret: "kid",
  endUser: "eu",
  apiKey: "key",
  dataExport: "exp",
  /** A mail in the outbox (apps/worker/src/mail/outbox.ts). */
  mail: "mail",
  /** An assistant profile (2026-12-06). */
  profile: "apf",
  /** A knowledge document of a project (2026-12-06). */
  document: "doc",
  /** A tool source of an org, and one call of a tool (2026-12-06, issue 30). */
  toolSource: "tsrc",
  toolCall: "tcl",
} as const;

export type IdKind = keyof typeof idPrefix;

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

export function newId(kind: IdKind, now: number = Date.now()): string {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let random = "";
  for (const byte of bytes) random += ALPHABET[byte % 32];
  return `${idPrefix[kind]}_${time}${random}`;
}

/** True when `value` has the shape of an id of `kind`: used to answer 404 early for junk ids. */
export function isId(kind: IdKind, value: string): boolean {
  return new RegExp(`^${idPrefix[kind]}_[0-9a-hjkmnp-tv-z]{26}$`).test(value);
}

/** Whether an id is an end user's (`eu_...`): a principal of an org that is never a Parley account. */
export function isEndUserId(id: string): boolean {
  return id.startsWith(`${idPrefix.endUser}_`);
}
