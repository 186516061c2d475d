/** Reading the dev model's wire in tests: chat requests and SSE events, parsed as sent. */
import { expect } from "vitest";

export const AUTH = { authorization: "Bearer anything", "content-type": "application/json" };

export function chatAt(
  baseUrl: string,
  body: Record<string, unknown>,
  init: RequestInit = {},
): Promise<Response> {
  return fetch(`${baseUrl}/chat/completions`, {
    method: "POST",
    headers: AUTH,
    body: JSON.stringify(body),
    ...init,
  });
}

/** SSE events as sent: comments kept verbatim, `data:` payloads parsed unless `[DONE]`. */
export type Event = { comment: string } | { done: true } | { data: Record<string, unknown> };

export function events(body: string): Event[] {
  expect(body.endsWith("\n\n")).toBe(true);
  return body
    .slice(0, -2)
    .split("\n\n")
    .map((block): Event => {
      if (block.startsWith(":")) return { comment: block };
      expect(block.startsWith("data: ")).toBe(true);
      const payload = block.slice("data: ".length);
      return payload === "[DONE]" ? { done: true } : { data: JSON.parse(payload) };
    });
}

export function dataOf(list: Event[]): Record<string, unknown>[] {
  return list.flatMap((e) => ("data" in e ? [e.data] : []));
}

export type Choice = {
  delta: {
    content?: string | null;
    tool_calls?: unknown[];
    reasoning?: string;
    reasoning_details?: Record<string, unknown>[];
  };
  finish_reason: string | null;
};

export function choicesOf(chunk: Record<string, unknown>): Choice[] {
  return chunk.choices as Choice[];
}

/** The data chunks of a streamed response, after checking it ends with `[DONE]`. */
export async function streamedChunks(response: Response): Promise<Record<string, unknown>[]> {
  const list = events(await response.text());
  expect(list.at(-1)).toEqual({ done: true });
  return dataOf(list);
}
