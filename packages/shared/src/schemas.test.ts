import { describe, expect, it } from "vitest";
import {
  createProjectSchema,
  MAX_MEMORY_BYTES,
  memoryBytes,
  signupSchema,
  updateProjectSchema,
} from "./schemas.ts";

describe("schemas", () => {
  it("normalizes emails and refuses unknown fields", () => {
    const parsed = signupSchema.parse({
      email: "  Ada@Example.COM ",
      password: "long enough",
      name: " Ada ",
    });
    expect(parsed).toEqual({ email: "ada@example.com", password: "long enough", name: "Ada" });
    const extra = signupSchema.safeParse({
      email: "a@b.co",
      password: "long enough",
      name: "A",
      role: "owner",
    });
    expect(extra.success).toBe(false);
  });

  it("accepts JSON objects as memory and refuses other shapes", () => {
    expect(
      createProjectSchema.safeParse({ name: "P", memory: { a: [1, { b: null }] } }).success,
    ).toBe(true);
    expect(createProjectSchema.safeParse({ name: "P", memory: [1] }).success).toBe(false);
    expect(createProjectSchema.safeParse({ name: "P", memory: { "": 1 } }).success).toBe(false);
  });

  it("requires something to update", () => {
    expect(updateProjectSchema.safeParse({}).success).toBe(false);
    expect(updateProjectSchema.safeParse({ memory: {} }).success).toBe(true);
  });

  it("measures memory in UTF-8 bytes", () => {
    expect(memoryBytes({ a: "é" })).toBe(JSON.stringify({ a: "é" }).length + 1);
    expect(memoryBytes({ notes: "x".repeat(MAX_MEMORY_BYTES) })).toBeGreaterThan(MAX_MEMORY_BYTES);
  });
});
