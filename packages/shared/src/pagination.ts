import { z } from "zod";

/** Every list in the contract is `{ items, nextCursor }`; `nextCursor` is null on the last page. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 50;

function pageQuery(max: number, fallback: number) {
  return z.strictObject({
    cursor: z.string().min(1).max(200).optional(),
    limit: z
      .string()
      .regex(/^\d+$/, "must be a whole number")
      .transform(Number)
      .pipe(z.number().int().min(1).max(max))
      .default(fallback),
  });
}

/**
 * Query string of a paginated list: an opaque cursor from the previous page and a page size. The
 * size is decimal digits only: `z.coerce.number()` read "0x10" as 16 and "1e2" as 100.
 */
export const pageQuerySchema = pageQuery(MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE);
export type PageQuery = z.infer<typeof pageQuerySchema>;

/** A page query whose lists read an outside service per item: smaller pages, the same rules. */
export const smallPageQuerySchema = (max: number) => pageQuery(max, max);
