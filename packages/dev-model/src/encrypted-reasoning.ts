/**
 * Encrypted reasoning carried across the steps of a tool loop, as reasoning models need it
 * (OpenRouter's "Preserving Reasoning": the `reasoning_details` of the assistant's tool-call step
 * must come back unmodified with the tool results, or Anthropic refuses the request and OpenAI's
 * reasoning loses its context).
 *
 * When a step that reasons ends in tool calls, the dev model sends one `reasoning.encrypted`
 * detail and remembers it under each tool call id. Later requests are checked: an assistant
 * message after the last user message whose tool calls were issued with such a detail must carry
 * it back in its `reasoning_details`, with the same `id` and `data`; otherwise the request is
 * refused with a 400 (`invalid_prompt`). Earlier turns are not checked: providers drop old
 * reasoning themselves.
 */
import { randomBytes } from "node:crypto";
import { type ChatRequest, isRecord } from "./request.ts";

export type EncryptedReasoningDetail = {
  readonly type: "reasoning.encrypted";
  readonly id: string;
  readonly data: string;
  readonly format: "openai-responses-v1";
  readonly index: number;
};

export class EncryptedReasoning {
  readonly #byToolCall = new Map<string, EncryptedReasoningDetail>();
  readonly #limit: number;

  constructor(limit = 10_000) {
    this.#limit = Math.max(1, limit);
  }

  /** A new detail for a step whose tool calls have these ids, remembered for the check. */
  issue(toolCallIds: readonly string[], index: number): EncryptedReasoningDetail {
    const detail: EncryptedReasoningDetail = {
      type: "reasoning.encrypted",
      id: `rs_${randomBytes(12).toString("hex")}`,
      data: randomBytes(48).toString("base64"),
      format: "openai-responses-v1",
      index,
    };
    for (const id of toolCallIds) {
      this.#byToolCall.delete(id);
      this.#byToolCall.set(id, detail);
    }
    while (this.#byToolCall.size > this.#limit) {
      const oldest = this.#byToolCall.keys().next();
      if (oldest.done) break;
      this.#byToolCall.delete(oldest.value);
    }
    return detail;
  }

  /** Why the request lost a detail it had to carry back, or null when nothing is missing. */
  missing(request: ChatRequest): string | null {
    let lastUser = -1;
    request.messages.forEach((message, i) => {
      if (message.role === "user") lastUser = i;
    });
    for (const message of request.messages.slice(lastUser + 1)) {
      if (message.role !== "assistant" || !Array.isArray(message.tool_calls)) continue;
      for (const call of message.tool_calls) {
        const id = isRecord(call) && typeof call.id === "string" ? call.id : undefined;
        const expected = id === undefined ? undefined : this.#byToolCall.get(id);
        if (expected === undefined) continue;
        const details = Array.isArray(message.reasoning_details) ? message.reasoning_details : [];
        const carried = details.some(
          (d) =>
            isRecord(d) &&
            d.type === expected.type &&
            d.id === expected.id &&
            d.data === expected.data,
        );
        if (!carried) {
          return `The assistant message with tool call ${id} must carry back its reasoning_details unchanged (a reasoning.encrypted detail with id ${expected.id}) within a tool loop (dev model)`;
        }
      }
    }
    return null;
  }

  clear(): void {
    this.#byToolCall.clear();
  }
}
