import { env } from "cloudflare:test";
import { importJWK, type JWK, SignJWT } from "jose";
import { toBase64Url } from "../src/auth/encoding.ts";

/**
 * The token attacks of the foundation issue, shared by the HTTP suite (token-attacks.test.ts) and the
 * WebSocket one (adversarial.test.ts). Each makes a token for `victim()` that changes one thing from
 * a valid one; `undefined` means no token at all.
 */
const secret = JSON.parse(env.JWT_PRIVATE_KEY) as JWK;
const now = () => Math.floor(Date.now() / 1000);

/** Signs with the real private key; each attack changes one thing. */
export async function signed(
  userId: string,
  change: { claims?: Record<string, unknown>; header?: Record<string, unknown> } = {},
): Promise<string> {
  const key = await importJWK(secret, "ES256");
  return new SignJWT({
    sub: userId,
    iss: env.JWT_ISSUER,
    aud: env.JWT_AUDIENCE,
    iat: now(),
    exp: now() + 600,
    jti: crypto.randomUUID(),
    sid: crypto.randomUUID(),
    ver: 0,
    ...change.claims,
  })
    .setProtectedHeader({ alg: "ES256", kid: secret.kid, typ: "JWT", ...change.header })
    .sign(key);
}

const b64json = (value: unknown) => toBase64Url(new TextEncoder().encode(JSON.stringify(value)));

export type TokenAttack = [name: string, make: () => Promise<string | undefined>];

export function tokenAttacks(victim: () => string): TokenAttack[] {
  return [
    ["missing token", async () => undefined],
    ["empty token", async () => ""],
    ["garbage", async () => "not.a.jwt"],
    ["expired", () => signed(victim(), { claims: { iat: now() - 3600, exp: now() - 60 } })],
    ["nbf in the future", () => signed(victim(), { claims: { nbf: now() + 600 } })],
    ["wrong audience", () => signed(victim(), { claims: { aud: "someone-else" } })],
    ["wrong issuer", () => signed(victim(), { claims: { iss: "evil" } })],
    ["no jti", () => signed(victim(), { claims: { jti: undefined } })],
    ["no sign-in session (sid)", () => signed(victim(), { claims: { sid: undefined } })],
    [
      "a token version older than the user's (issued before a role change)",
      () => signed(victim(), { claims: { ver: -1 } }),
    ],
    ["issued too long ago", () => signed(victim(), { claims: { iat: now() - 7200 } })],
    [
      "one payload byte flipped",
      async () => {
        const [h, p, s] = (await signed(victim())).split(".");
        const bytes = Uint8Array.from(
          atob((p ?? "").replaceAll("-", "+").replaceAll("_", "/")),
          (c) => c.charCodeAt(0),
        );
        bytes[5] = (bytes[5] ?? 0) ^ 1;
        return `${h}.${toBase64Url(bytes)}.${s}`;
      },
    ],
    [
      "alg none",
      async () =>
        `${b64json({ alg: "none", typ: "JWT" })}.${b64json({ sub: victim(), iss: env.JWT_ISSUER, aud: env.JWT_AUDIENCE, iat: now(), exp: now() + 600, jti: "x" })}.`,
    ],
    [
      "HS256 signed with the public key as the secret",
      async () => {
        const { d: _d, ...publicJwk } = secret;
        const hmacKey = new TextEncoder().encode(JSON.stringify(publicJwk));
        return new SignJWT({ sub: victim(), iss: env.JWT_ISSUER, aud: env.JWT_AUDIENCE, jti: "x" })
          .setProtectedHeader({ alg: "HS256", kid: secret.kid })
          .setIssuedAt()
          .setExpirationTime("10m")
          .sign(hmacKey);
      },
    ],
    ["unknown kid", () => signed(victim(), { header: { kid: "someone-elses-key" } })],
    [
      "signed by another key with our kid",
      async () => {
        const { privateKey } = (await crypto.subtle.generateKey(
          { name: "ECDSA", namedCurve: "P-256" },
          true,
          ["sign", "verify"],
        )) as CryptoKeyPair;
        return new SignJWT({ sub: victim(), iss: env.JWT_ISSUER, aud: env.JWT_AUDIENCE, jti: "x" })
          .setProtectedHeader({ alg: "ES256", kid: secret.kid })
          .setIssuedAt()
          .setExpirationTime("10m")
          .sign(privateKey);
      },
    ],
    ["a user that no longer exists", () => signed("usr_00000000000000000000000000")],
  ];
}
