import { expect } from "vitest";

/** A list's answer, as every list in the contract gives it. */
export type Page<T> = { items: T[]; nextCursor: string | null };

/**
 * Every page of `path`, `limit` at a time, as a reader pages it (each `nextCursor` sent back as it
 * came, until it is null): each page's item ids. Ten pages at most, so a cursor that never ends
 * fails the test instead of hanging it.
 */
export async function pages<T extends { id: string }>(
  read: (path: string) => Promise<{ status: number; body: Page<T> }>,
  path: string,
  limit: number,
): Promise<string[][]> {
  const out: string[][] = [];
  const join = path.includes("?") ? "&" : "?";
  let cursor: string | null = null;
  do {
    const after = cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`;
    const res = await read(`${path}${join}limit=${limit}${after}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    out.push(res.body.items.map((item) => item.id));
    cursor = res.body.nextCursor;
  } while (cursor !== null && out.length < 10);
  return out;
}

/** `ids` as an id-keyed list answers them: newest (greatest id) first, `limit` to a page. */
export function newestFirst(ids: readonly string[], limit: number): string[][] {
  const sorted = [...ids].sort().reverse();
  const out: string[][] = [];
  for (let i = 0; i < sorted.length; i += limit) out.push(sorted.slice(i, i + limit));
  return out;
}
