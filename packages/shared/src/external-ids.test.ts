import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  eraseEndUserSchema,
  externalIdProblem,
  externalIdSchema,
  MAX_EXTERNAL_ID_CHARS,
} from "./external-ids.ts";

describe("external ids (an end user's sub)", () => {
  it("takes any one line of visible text, exactly as sent: dots, slashes, escapes, emails, any script", () => {
    for (const id of [".", "..", "a/b", "%2e%2e", "?#", "a b", "ada@example.com", "é", "e\u0301"]) {
      expect(externalIdProblem(id), id).toBeNull();
      expect(externalIdSchema.parse(id)).toBe(id);
    }
    expect(externalIdProblem("x".repeat(MAX_EXTERNAL_ID_CHARS))).toBeNull();
  });

  it("refuses what no listing, log or export could show as sent", () => {
    for (const id of [
      "",
      " ",
      " a",
      "a ",
      "\u3000a",
      "x".repeat(MAX_EXTERNAL_ID_CHARS + 1),
      "a\tb",
      "a\u0000",
      "\u202ea",
      "\u200b",
      "\u0301a",
      "a\ufffd",
      "a\ud800",
    ]) {
      expect(externalIdProblem(id), JSON.stringify(id)).not.toBeNull();
      expect(externalIdSchema.safeParse(id).success, JSON.stringify(id)).toBe(false);
    }
    expect(externalIdProblem(42)).toBe("must be a string");
  });

  it("the schema and the function agree on every string, and an accepted one survives JSON as is", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: MAX_EXTERNAL_ID_CHARS + 4 }), (id) => {
        const accepted = externalIdProblem(id) === null;
        expect(externalIdSchema.safeParse(id).success).toBe(accepted);
        if (accepted) {
          expect(id.length).toBeGreaterThan(0);
          expect(id.length).toBeLessThanOrEqual(MAX_EXTERNAL_ID_CHARS);
          expect(id.trim()).toBe(id);
          expect(JSON.parse(JSON.stringify(id))).toBe(id);
          expect(eraseEndUserSchema.parse({ externalId: id })).toEqual({ externalId: id });
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("erasure bodies name exactly one end user, by external id or by Parley id", () => {
    expect(
      eraseEndUserSchema.safeParse({ endUserId: "eu_00000000000000000000000000" }).success,
    ).toBe(true);
    for (const body of [
      {},
      { endUserId: "usr_00000000000000000000000000" },
      { externalId: "a", x: 1 },
    ]) {
      expect(eraseEndUserSchema.safeParse(body).success, JSON.stringify(body)).toBe(false);
    }
  });
});
