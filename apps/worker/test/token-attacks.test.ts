import { env } from "cloudflare:test";
import { importJWK, type JWK, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { toBase64Url } from "../src/auth/encoding.ts";
import { api, errorCode, type Person, person, snapshot } from "./helpers.ts";

const secret = JSON.parse(env.JWT_PRIVATE_KEY) as JWK;
const now = () => Math.floor(Date.now() / 1000);

/** Signs with the real private key; each attack changes one thing. */
async function signed(
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
    ...change.claims,
  })
    .setProtectedHeader({ alg: "ES256", kid: secret.kid, typ: "JWT", ...change.header })
    .sign(key);
}

const b64json = (value: unknown) => toBase64Url(new TextEncoder().encode(JSON.stringify(value)));

let victim: Person;
beforeAll(async () => {
  victim = await person("victim");
});

const attacks: [string, () => Promise<string | undefined>][] = [
  ["missing token", async () => undefined],
  ["empty token", async () => ""],
  ["garbage", async () => "not.a.jwt"],
  ["expired", () => signed(victim.id, { claims: { iat: now() - 3600, exp: now() - 60 } })],
  ["nbf in the future", () => signed(victim.id, { claims: { nbf: now() + 600 } })],
  ["wrong audience", () => signed(victim.id, { claims: { aud: "someone-else" } })],
  ["wrong issuer", () => signed(victim.id, { claims: { iss: "evil" } })],
  ["no jti", () => signed(victim.id, { claims: { jti: undefined } })],
  ["issued too long ago", () => signed(victim.id, { claims: { iat: now() - 7200 } })],
  [
    "one payload byte flipped",
    async () => {
      const [h, p, s] = (await signed(victim.id)).split(".");
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
      `${b64json({ alg: "none", typ: "JWT" })}.${b64json({ sub: victim.id, iss: env.JWT_ISSUER, aud: env.JWT_AUDIENCE, iat: now(), exp: now() + 600, jti: "x" })}.`,
  ],
  [
    "HS256 signed with the public key as the secret",
    async () => {
      const { d: _d, ...publicJwk } = secret;
      const hmacKey = new TextEncoder().encode(JSON.stringify(publicJwk));
      return new SignJWT({ sub: victim.id, iss: env.JWT_ISSUER, aud: env.JWT_AUDIENCE, jti: "x" })
        .setProtectedHeader({ alg: "HS256", kid: secret.kid })
        .setIssuedAt()
        .setExpirationTime("10m")
        .sign(hmacKey);
    },
  ],
  ["unknown kid", () => signed(victim.id, { header: { kid: "someone-elses-key" } })],
  [
    "signed by another key with our kid",
    async () => {
      const { privateKey } = (await crypto.subtle.generateKey(
        { name: "ECDSA", namedCurve: "P-256" },
        true,
        ["sign", "verify"],
      )) as CryptoKeyPair;
      return new SignJWT({ sub: victim.id, iss: env.JWT_ISSUER, aud: env.JWT_AUDIENCE, jti: "x" })
        .setProtectedHeader({ alg: "ES256", kid: secret.kid })
        .setIssuedAt()
        .setExpirationTime("10m")
        .sign(privateKey);
    },
  ],
  ["a user that no longer exists", () => signed("usr_00000000000000000000000000")],
];

describe("token attacks: each is 401 and changes nothing", () => {
  it.each(attacks)("%s", async (_name, make) => {
    const token = await make();
    const before = await snapshot();
    const headers: Record<string, string> =
      token === undefined ? {} : { authorization: `Bearer ${token}` };
    const write = await api("POST", "/api/orgs", { headers, body: { name: "Pwned" } });
    expect(write.status).toBe(401);
    expect(errorCode(write)).toBe("unauthorized");
    const read = await api("GET", "/api/me", { headers });
    expect(read.status).toBe(401);
    expect(await snapshot()).toEqual(before);
  });

  it("the same claims, properly signed, are accepted (so the attacks above fail for their reason)", async () => {
    const res = await api("GET", "/api/me", { token: await signed(victim.id) });
    expect(res.status).toBe(200);
  });
});
