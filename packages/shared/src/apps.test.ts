import { describe, expect, it } from "vitest";
import {
  createAppSchema,
  endUserTokenRequestSchema,
  jwkProblem,
  originProblem,
  rotateAppSecretSchema,
  tokenVerificationSchema,
} from "./apps.ts";

describe("app origins", () => {
  it("accepts exactly what a browser sends in Origin", () => {
    for (const origin of [
      "https://shop.example.com",
      "https://shop.example.com:8443",
      "http://localhost:3000",
      "http://127.0.0.1:5173",
      "http://[::1]:8080",
      "https://xn--bcher-kva.example",
    ]) {
      expect(originProblem(origin), origin).toBeNull();
    }
  });

  it("refuses paths, wildcards, plain http elsewhere, spelled-out default ports and capitals", () => {
    for (const origin of [
      "https://shop.example.com/",
      "https://shop.example.com/app",
      "https://shop.example.com?x=1",
      "https://*.example.com",
      "*",
      "http://shop.example.com",
      "https://shop.example.com:443",
      "https://SHOP.example.com",
      "https://user@shop.example.com",
      "ftp://shop.example.com",
      "null",
      "shop.example.com",
      "https://bücher.example",
    ]) {
      expect(originProblem(origin), origin).not.toBeNull();
    }
    expect(originProblem("https://shop.example.com/")).toContain("(https://shop.example.com)");
  });
});

describe("public keys", () => {
  const ec = { kty: "EC", crv: "P-256", x: "a".repeat(43), y: "b".repeat(43) };
  it("must fit the algorithm and be public", () => {
    expect(jwkProblem("ES256", ec)).toBeNull();
    expect(jwkProblem("ES256", { ...ec, d: "c" })?.member).toBe("d");
    expect(jwkProblem("RS256", ec)?.member).toBe("kty");
    expect(jwkProblem("EdDSA", { kty: "OKP", crv: "X25519", x: "a".repeat(43) })?.member).toBe(
      "crv",
    );
    expect(jwkProblem("ES256", { ...ec, alg: "ES384" })?.member).toBe("alg");
    expect(jwkProblem("ES256", { ...ec, use: "enc" })?.member).toBe("use");
    expect(jwkProblem("ES256", { kty: "EC", crv: "P-256", x: "a".repeat(43) })?.member).toBe("y");
  });

  it("the verification schema pins an algorithm from the list, never HS256 or none for a key", () => {
    const base = { issuer: "i", audience: "a" };
    for (const alg of ["HS256", "none", "RS512"]) {
      const parsed = tokenVerificationSchema.safeParse({
        type: "public_key",
        alg,
        jwk: ec,
        ...base,
      });
      expect(parsed.success, alg).toBe(false);
    }
    const ok = tokenVerificationSchema.parse({
      type: "public_key",
      alg: "ES256",
      jwk: ec,
      ...base,
    });
    expect(ok).toMatchObject({ maxTokenLifetimeSeconds: 600 });
    expect(
      tokenVerificationSchema.safeParse({ type: "secret", ...base, secret: "x" }).success,
    ).toBe(false);
  });
});

describe("app bodies", () => {
  it("limits are non-negative integers or null; the rest defaults", () => {
    const body = {
      name: "Shop",
      projectIds: ["prj_1"],
      verification: { type: "secret", issuer: "i", audience: "a" },
    };
    expect(createAppSchema.parse(body)).toMatchObject({
      allowedOrigins: [],
      endUserDailyLimitMicros: null,
      endUserMonthlyLimitMicros: null,
      showCost: false,
    });
    for (const value of [-1, 0.5, "1", Number.MAX_SAFE_INTEGER + 1]) {
      expect(createAppSchema.safeParse({ ...body, endUserDailyLimitMicros: value }).success).toBe(
        false,
      );
    }
    expect(createAppSchema.safeParse({ ...body, endUserDailyLimitMicros: 0 }).success).toBe(true);
    expect(rotateAppSecretSchema.parse({})).toEqual({ overlapSeconds: 3600 });
  });
});

describe("end-user token requests (the API-key route)", () => {
  it("take a sub of one line of 1 to 128 characters and an optional name", () => {
    expect(endUserTokenRequestSchema.parse({ sub: "user-1", name: " Ada " })).toEqual({
      sub: "user-1",
      name: "Ada",
    });
    for (const sub of ["", "u".repeat(129), "a\nb", "\u202Eevil"]) {
      expect(endUserTokenRequestSchema.safeParse({ sub }).success, sub).toBe(false);
    }
    expect(endUserTokenRequestSchema.safeParse({ sub: "u", org: "x" }).success).toBe(false);
  });
});
