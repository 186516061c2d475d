import { describe, expect, it } from "vitest";
import {
  allowedModelsSchema,
  catalogueEntrySchema,
  createProfileSchema,
  instructionsSchema,
  MAX_INSTRUCTIONS_BYTES,
  updateProfileSchema,
} from "./assistants.ts";

describe("instructions", () => {
  it("keeps tabs and line feeds, composes to NFC, trims the end, counts bytes after that", () => {
    expect(instructionsSchema.parse("a\tb\nc\u0065\u0301  \n")).toBe("a\tb\ncé");
    const full = "é".repeat(MAX_INSTRUCTIONS_BYTES / 2);
    expect(instructionsSchema.parse(full)).toBe(full);
    // Decomposed, the same text is 50% longer; it is measured composed.
    expect(instructionsSchema.parse("e\u0301".repeat(MAX_INSTRUCTIONS_BYTES / 2))).toBe(full);
    expect(instructionsSchema.safeParse(`${full}a`).success).toBe(false);
  });

  it("refuses control characters but tab and line feed, lone surrogates, U+FFFD and bidi embeddings", () => {
    for (const bad of [
      "\r\n",
      "\u0000",
      "\u0007",
      "\u007f",
      "\u0085",
      "\u2028",
      "\ud800",
      "\uFFFD",
      "\u202E",
      "\u2066",
    ]) {
      expect(instructionsSchema.safeParse(`x${bad}y`).success, JSON.stringify(bad)).toBe(false);
    }
    // Marks that only steer neighbouring characters are fine (RTL text uses them).
    expect(instructionsSchema.safeParse("שלום\u200F!").success).toBe(true);
  });
});

describe("profiles", () => {
  it("takes at most six suggestions and each tool once; a change must change something", () => {
    expect(
      createProfileSchema.safeParse({ name: "A", suggestions: ["1", "2", "3", "4", "5", "6"] })
        .success,
    ).toBe(true);
    expect(
      createProfileSchema.safeParse({ name: "A", suggestions: ["1", "2", "3", "4", "5", "6", "7"] })
        .success,
    ).toBe(false);
    expect(
      createProfileSchema.safeParse({ name: "A", tools: ["get_balance", "get_balance"] }).success,
    ).toBe(false);
    expect(createProfileSchema.safeParse({ name: "A", tools: ["Get Balance"] }).success).toBe(
      false,
    );
    expect(updateProfileSchema.safeParse({ baseVersion: 2 }).success).toBe(false);
    expect(updateProfileSchema.safeParse({ welcome: null, baseVersion: 2 }).success).toBe(true);
  });
});

describe("the catalogue's entries and an org's list", () => {
  const entry = {
    id: "acme/model-1:free",
    provider: { type: "openrouter" },
    displayName: "Acme",
    contextWindow: 1000,
    maxOutputTokens: 100,
    capabilities: { tools: true, reasoning: false },
    pricing: { prompt: "0.000001", completion: "0.000002" },
  };

  it("takes OpenRouter's ids and decimal prices, names a key's secret only by an _API_KEY name", () => {
    expect(catalogueEntrySchema.parse(entry)).toMatchObject({
      freePreview: false,
      temperature: null,
    });
    const local = {
      type: "openai-compatible",
      baseUrl: "http://127.0.0.1:8080/v1",
      apiKeySecret: "LOCAL_API_KEY",
    };
    expect(catalogueEntrySchema.safeParse({ ...entry, provider: local }).success).toBe(true);
    for (const secret of [
      "JWT_PRIVATE_KEY",
      "STRIPE_SECRET_KEY",
      "OPERATOR_SECRET",
      "api_key",
      "_API_KEY",
    ]) {
      expect(
        catalogueEntrySchema.safeParse({ ...entry, provider: { ...local, apiKeySecret: secret } })
          .success,
        secret,
      ).toBe(false);
    }
    for (const price of ["1e-6", "-0.1", ".5", "0,1", ""]) {
      expect(
        catalogueEntrySchema.safeParse({ ...entry, pricing: { prompt: price, completion: "0" } })
          .success,
        price,
      ).toBe(false);
    }
    expect(catalogueEntrySchema.safeParse({ ...entry, id: "has space" }).success).toBe(false);
  });

  it("an org's list: at least one model, each once, or null", () => {
    expect(allowedModelsSchema.safeParse({ models: null }).success).toBe(true);
    expect(allowedModelsSchema.safeParse({ models: [] }).success).toBe(false);
    expect(allowedModelsSchema.safeParse({ models: ["a/b", "a/b"] }).success).toBe(false);
  });
});
