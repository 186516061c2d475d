import { describe, expect, it } from "vitest";
import { z } from "zod";
import { invalidRequest } from "./errors.ts";

describe("invalidRequest", () => {
  it("lists a field's problem even when the first problem has no field", () => {
    const error = new z.ZodError([
      { code: "custom", path: [], message: "at least one setting is required", input: {} },
      { code: "custom", path: ["name"], message: "is too long", input: "x" },
    ]);
    // A JSON body's problems have no prefix: the object's own rule has no field.
    const refused = invalidRequest(error);
    expect(refused.message).toBe("at least one setting is required");
    expect(refused.field).toBeUndefined();
    expect(refused.issues).toEqual([{ field: "name", message: "is too long" }]);
  });

  it("one problem: field and message only, no list", () => {
    const error = new z.ZodError([
      { code: "custom", path: ["name"], message: "is too long", input: "x" },
    ]);
    const refused = invalidRequest(error);
    expect(refused).toMatchObject({ field: "name", message: "name: is too long" });
    expect(refused.issues).toBeUndefined();
  });
});
