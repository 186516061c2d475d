import { describe, expect, it } from "vitest";
import { pageQuerySchema } from "./pagination.ts";

describe("pageQuerySchema", () => {
  it("takes decimal digits only, and says a too-large page is too large", () => {
    expect(pageQuerySchema.parse({ limit: "20" }).limit).toBe(20);
    expect(pageQuerySchema.parse({}).limit).toBe(50);
    for (const limit of ["0x10", "1e2", "-1", "abc", "2.5"]) {
      expect(pageQuerySchema.safeParse({ limit }).success, limit).toBe(false);
    }
    for (const limit of ["101", "1000", "99999999"]) {
      const result = pageQuerySchema.safeParse({ limit });
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]?.message, limit).toMatch(/100/);
    }
  });
});
