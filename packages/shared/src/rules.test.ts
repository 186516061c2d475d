import { describe, expect, it } from "vitest";
import { autoTopUpSettingsSchema, checkoutSchema, operatorGrantSchema } from "./billing.ts";
import { knowledgeSearchQuerySchema } from "./knowledge.ts";
import { pageQuerySchema } from "./pagination.ts";
import { createToolSourceSchema } from "./tool-sources.ts";

const messageOf = (result: { error?: { issues: { message: string }[] } }) =>
  result.error?.issues[0]?.message;

/** A refusal states the rule the value broke, not a symptom of how it was checked. */
describe("validation messages state the rule", () => {
  it("a query integer out of range names its range, whichever way it is out", () => {
    for (const limit of ["-1", "0", "101", "2.5", "abc"]) {
      expect(messageOf(pageQuerySchema.safeParse({ limit })), limit).toBe(
        "must be a whole number from 1 to 100",
      );
    }
    expect(messageOf(knowledgeSearchQuerySchema.safeParse({ q: "x", limit: "-1" }))).toBe(
      "must be a whole number from 1 to 20",
    );
  });

  it("an amount past its range names the range in micro-dollars and dollars, not 2^53", () => {
    expect(
      messageOf(operatorGrantSchema.safeParse({ amountMicros: 1e30, idempotencyKey: "k" })),
    ).toBe("must be from 1 to 1000000000000 micro-dollars ($0.000001 to $1,000,000)");
    const topUp = autoTopUpSettingsSchema.safeParse({
      enabled: true,
      thresholdMicros: 5_000_000,
      amountMicros: 1e30,
      monthlyCapMicros: 100_000_000,
    });
    expect(messageOf(topUp)).toBe(
      "must be from 1000000 to 10000000000 micro-dollars ($1 to $10,000)",
    );
    // Checkout's range is the Worker's setting: the schema lets a huge whole number through to
    // the route's range check rather than answer with JavaScript's largest safe integer.
    expect(checkoutSchema.safeParse({ amountMicros: 1e30 }).success).toBe(true);
    expect(messageOf(checkoutSchema.safeParse({ amountMicros: 5_000_001 }))).toMatch(/cents/);
    expect(messageOf(checkoutSchema.safeParse({ amountMicros: 1.5 }))).toBe(
      "must be a whole number of micro-dollars",
    );
  });

  it("a URL of another scheme says https is required", () => {
    const result = createToolSourceSchema.safeParse({
      kind: "mcp",
      name: "Files",
      url: "ftp://files.example.com/mcp",
    });
    expect(messageOf(result)).toMatch(/^must be an https:\/\/ URL/);
  });
});
