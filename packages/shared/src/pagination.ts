import { z } from "zod";

/** Every list in the contract is `{ items, nextCursor }`; `nextCursor` is null on the last page. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 50;

/**
 * A whole number in a query string, from `min` to `max`: decimal digits only (`z.coerce.number()`
 * read "0x10" as 16 and "1e2" as 100), and one message stating the rule whatever breaks it ("-1"
 * read "must be a whole number", which it is).
 */
export function queryInteger(min: number, max: number) {
  const rule = `must be a whole number from ${min} to ${max}`;
  return z
    .string()
    .regex(/^\d+$/, rule)
    .transform(Number)
    .pipe(z.number().int(rule).min(min, rule).max(max, rule));
}

function pageQuery(max: number, fallback: number) {
  return z.strictObject({
    cursor: z.string().min(1).max(200).optional(),
    limit: queryInteger(1, max).default(fallback),
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
