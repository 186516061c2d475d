import { MAX_MEMORY_BYTES, type Memory, memoryBytes, memorySchema } from "@parley/shared";
import { asSentence, problemWords } from "./refusal.ts";

export type MemoryParse = { ok: true; memory: Memory } | { ok: false; error: string };

/**
 * Validates the memory editor's text before it is sent: JSON syntax, an object at the top level,
 * keys of 1 to 100 characters, and the server's size limit, so the user learns at once and in words.
 */
export function parseMemory(text: string): MemoryParse {
  if (text.trim() === "") return { ok: true, memory: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof SyntaxError ? error.message : "";
    return { ok: false, error: `Not valid JSON${detail ? `: ${detail}` : ""}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, error: 'Memory must be a JSON object, like {"audience": "founders"}' };
  }
  const parsed = memorySchema.safeParse(value);
  if (!parsed.success) {
    // Every problem at once, each a sentence, in the words the API's refusal would use.
    const error = parsed.error.issues
      .map((issue) => memoryProblem(issue.path.join("."), problemWords(issue.message)))
      .join(" ");
    return { ok: false, error };
  }
  const bytes = memoryBytes(parsed.data);
  if (bytes > MAX_MEMORY_BYTES) {
    return {
      ok: false,
      error: `Memory is too large: ${bytes} bytes, at most ${MAX_MEMORY_BYTES} allowed`,
    };
  }
  return { ok: true, memory: parsed.data };
}

/** One problem of a memory as a sentence: where in it (`at plans.team`), and why. */
export const memoryProblem = (where: string, message: string): string =>
  asSentence(`Memory is not accepted${where ? ` at ${where}` : ""}: ${message}`);

export const formatMemory = (memory: Memory): string => JSON.stringify(memory, null, 2);
