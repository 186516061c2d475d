import { describe, expect, it } from "vitest";
import {
  createInput,
  draftOf,
  emptyApp,
  emptyVerification,
  updateInput,
  verificationInput,
} from "./app-draft.ts";
import { APP } from "./fixtures.ts";
import { NO_PROJECT } from "./form-check.ts";

const valid = () => ({ ...emptyApp(["prj_1"]), name: "Shop", origins: "https://shop.example" });
const verification = () => emptyVerification("https://shop.example");

describe("an app's form, checked with the API's own schema", () => {
  it("makes the creation body: origins one per line, dollars to micros, no profile as null", () => {
    const made = createInput(
      { ...valid(), origins: " https://shop.example \n\nhttp://localhost:5173", daily: "2.50" },
      verification(),
    );
    expect(made).toEqual({
      ok: true,
      value: {
        name: "Shop",
        allowedOrigins: ["https://shop.example", "http://localhost:5173"],
        projectIds: ["prj_1"],
        verification: {
          type: "secret",
          issuer: "https://shop.example",
          audience: "parley",
          maxTokenLifetimeSeconds: 600,
        },
        endUserDailyLimitMicros: 2_500_000,
        endUserWeeklyLimitMicros: null,
        endUserMonthlyLimitMicros: null,
        showCost: false,
        profileId: null,
      },
    });
  });

  it("refuses what the API refuses, naming the field as the API does", () => {
    const origin = createInput(
      { ...valid(), origins: "https://shop.example\nhttp://shop.example/" },
      verification(),
    );
    expect(origin).toEqual({
      ok: false,
      refusal: {
        field: "allowedOrigins.1",
        message: "must use https (plain http only for localhost)",
      },
    });
    const path = createInput({ ...valid(), origins: "https://shop.example/" }, verification());
    expect(path).toMatchObject({ ok: false, refusal: { field: "allowedOrigins.0" } });
    expect(createInput({ ...valid(), projectIds: [] }, verification())).toEqual({
      ok: false,
      refusal: { field: "projectIds", message: NO_PROJECT },
    });
    expect(createInput({ ...valid(), weekly: "ten" }, verification())).toMatchObject({
      ok: false,
      refusal: { field: "endUserWeeklyLimitMicros" },
    });
    expect(createInput(valid(), { ...verification(), issuer: "" })).toMatchObject({
      ok: false,
      refusal: { field: "verification.issuer" },
    });
    // zod's length and type messages, in words.
    expect(createInput({ ...valid(), name: "  " }, verification())).toEqual({
      ok: false,
      refusal: { field: "name", message: "is required" },
    });
    expect(createInput({ ...valid(), name: "x".repeat(101) }, verification())).toEqual({
      ok: false,
      refusal: { field: "name", message: "must be at most 100 characters" },
    });
    expect(createInput(valid(), { ...verification(), maxTokenLifetimeSeconds: "90000" })).toEqual({
      ok: false,
      refusal: { field: "verification.maxTokenLifetimeSeconds", message: "must be at most 86400" },
    });
  });

  it("checks a pasted public key: JSON first, then the members its algorithm needs", () => {
    const key = { ...verification(), type: "public_key" as const, alg: "ES256" as const };
    expect(createInput(valid(), { ...key, jwk: "{not json" })).toMatchObject({
      ok: false,
      refusal: { field: "verification.jwk" },
    });
    const rsa = JSON.stringify({ kty: "RSA", n: "x".repeat(342), e: "AQAB" });
    expect(createInput(valid(), { ...key, jwk: rsa })).toEqual({
      ok: false,
      refusal: { field: "verification.jwk.kty", message: "must be EC for ES256" },
    });
    const privateKey = JSON.stringify({
      kty: "EC",
      crv: "P-256",
      x: "a".repeat(43),
      y: "b".repeat(43),
      d: "c".repeat(43),
    });
    expect(verificationInput({ ...key, jwk: privateKey })).toMatchObject({
      ok: false,
      refusal: { field: "verification.jwk.d" },
    });
  });

  it("sends only what changed in an edit, and nothing when nothing did", () => {
    expect(updateInput(APP, draftOf(APP))).toEqual({ ok: true, value: null });
    expect(
      updateInput(APP, {
        ...draftOf(APP),
        daily: "",
        showCost: true,
        origins: "https://a.example",
      }),
    ).toEqual({
      ok: true,
      value: {
        allowedOrigins: ["https://a.example"],
        endUserDailyLimitMicros: null,
        showCost: true,
      },
    });
    expect(draftOf(APP).daily).toBe("2.50");
  });
});
