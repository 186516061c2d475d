import { AppError, type TokenVerificationInput } from "@parley/shared";
import { importJWK, type JWK } from "jose";
import { jwksUrlProblem } from "./tenant-jwks.ts";

/**
 * How an app's end-user tokens are verified, as stored on the app (routes/apps.ts): a shared
 * secret, a public key, or a JWKS URL, with the issuer, audience and lifetime rules.
 */

/** What of a public JWK is stored: the members its key needs, and its kid. */
const PUBLIC_MEMBERS = ["kty", "crv", "x", "y", "n", "e", "kid"] as const;

export interface StoredVerification {
  token_type: "secret" | "public_key" | "jwks";
  token_alg: string;
  token_jwk: string | null;
  token_jwks_url: string | null;
  token_issuer: string;
  token_audience: string;
  max_token_lifetime_seconds: number;
}

/** The checks the schema cannot make: the key imports, the JWKS URL passes the fetch rule. */
export async function storedVerification(
  env: Env,
  input: TokenVerificationInput,
): Promise<StoredVerification> {
  const rules = {
    token_issuer: input.issuer,
    token_audience: input.audience,
    max_token_lifetime_seconds: input.maxTokenLifetimeSeconds,
  };
  if (input.type === "secret") {
    return {
      token_type: "secret",
      token_alg: "HS256",
      token_jwk: null,
      token_jwks_url: null,
      ...rules,
    };
  }
  if (input.type === "jwks") {
    const problem = jwksUrlProblem(input.url, env.JWKS_ALLOW_PRIVATE ?? "");
    if (problem) {
      throw new AppError("invalid_request", `verification.url: ${problem}`, {
        field: "verification.url",
      });
    }
    return {
      token_type: "jwks",
      token_alg: input.alg,
      token_jwk: null,
      token_jwks_url: input.url,
      ...rules,
    };
  }
  const jwk: Record<string, unknown> = {};
  for (const member of PUBLIC_MEMBERS) {
    if (input.jwk[member] !== undefined) jwk[member] = input.jwk[member];
  }
  try {
    const key = await importJWK({ ...(jwk as JWK), alg: input.alg }, input.alg);
    if (key instanceof Uint8Array || key.type !== "public") throw new Error("not a public key");
  } catch (cause) {
    throw new AppError(
      "invalid_request",
      `verification.jwk: is not a usable ${input.alg} public key`,
      {
        field: "verification.jwk",
        cause,
      },
    );
  }
  return {
    token_type: "public_key",
    token_alg: input.alg,
    token_jwk: JSON.stringify(jwk),
    token_jwks_url: null,
    ...rules,
  };
}
