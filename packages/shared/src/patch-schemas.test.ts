import { describe, expect, it } from "vitest";
import { updateNotificationsSchema } from "./account-mail.ts";
import { updateAppSchema } from "./apps.ts";
import { updateProfileSchema } from "./assistants.ts";
import { updateMeSchema, updateProjectSchema } from "./schemas.ts";
import { updateEndUserSessionSchema, updateSessionSchema } from "./sessions.ts";
import { updateToolSourceSchema } from "./tool-sources.ts";

/**
 * A PATCH changes what its body names and nothing else. zod 4 applies a field's `.default()` even
 * under `.optional()`, so an update schema that reused a create schema's defaulted field reset it
 * on every PATCH that left it out (a tool source's description went to null on a price change).
 * Each update schema, given each of its fields alone, must parse to exactly that field.
 */
const schemas = {
  updateNotificationsSchema,
  updateAppSchema,
  updateProfileSchema,
  updateMeSchema,
  updateProjectSchema,
  updateSessionSchema,
  updateEndUserSessionSchema,
  updateToolSourceSchema,
};

describe("update schemas", () => {
  for (const [name, schema] of Object.entries(schemas)) {
    it(`${name}: a body with no fields parses to no field`, () => {
      const parsed = schema.safeParse({});
      // Most refuse an empty body; one that accepts it must not invent fields.
      if (parsed.success) expect(given(parsed.data)).toEqual([]);
    });
    it(`${name}: no field is filled in by a default`, () => {
      const keys = Object.keys(shapeOf(schema));
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        // Undefined for the field itself: whatever defaults do, they show up as other keys.
        const parsed = schema.safeParse({ [key]: undefined });
        if (parsed.success) expect(given(parsed.data)).toEqual([]);
      }
    });
  }
});

/** The fields a parse produced with a value (a key left undefined changes nothing). */
const given = (data: unknown): string[] =>
  Object.entries(data as object)
    .filter(([, value]) => value !== undefined)
    .map(([key]) => key);

/** The object shape under refinements and pipes. */
function shapeOf(schema: unknown): Record<string, unknown> {
  let current = schema as { _zod: { def: Record<string, unknown> } };
  for (let depth = 0; depth < 8; depth++) {
    const def = current._zod.def;
    if (def.shape) return def.shape as Record<string, unknown>;
    current = (def.in ?? def.schema ?? def.innerType) as typeof current;
    if (!current) break;
  }
  throw new Error("no object shape");
}
