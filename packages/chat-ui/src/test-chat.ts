/** Test helpers: a fake chat state for ChatView, and message builders. Not exported by the package. */
import type { UIMessage } from "ai";
import { vi } from "vitest";
import type { ParleyChatState } from "./use-parley-chat.ts";

export function fakeChat(overrides: Partial<ParleyChatState> = {}): ParleyChatState {
  return {
    messages: [],
    status: "ready",
    error: undefined,
    refusal: null,
    lost: false,
    busy: false,
    stoppedIds: new Set(),
    returnedDraft: null,
    send: vi.fn(),
    stop: vi.fn(),
    regenerate: vi.fn(),
    respondToApproval: vi.fn(),
    clearRefusal: vi.fn(),
    ...overrides,
  };
}

export const userMessage = (id: string, text: string): UIMessage => ({
  id,
  role: "user",
  parts: [{ type: "text", text }],
});

export const reply = (id: string, text: string, metadata?: unknown): UIMessage => ({
  id,
  role: "assistant",
  metadata,
  parts: [{ type: "text", text, state: "done" }],
});
