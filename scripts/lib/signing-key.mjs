// The access-token signing key: a private EC P-256 JWK with a kid, as the JWT_PRIVATE_KEY secret holds it.
import { webcrypto } from "node:crypto";

/** @returns {Promise<Record<string, string>>} a private JWK ready for JSON.stringify */
export async function generateSigningKey() {
  const { privateKey } = await webcrypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign", "verify"],
  );
  const jwk = await webcrypto.subtle.exportKey("jwk", privateKey);
  const kid = `k-${new Date().toISOString().slice(0, 10)}-${webcrypto.randomUUID().slice(0, 8)}`;
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, d: jwk.d, kid, alg: "ES256" };
}
