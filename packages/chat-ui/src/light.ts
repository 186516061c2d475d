/**
 * `@parley/chat-ui/light`: the chat's views with the light client (light-chat.ts) instead of the
 * AI SDK, for the embeddable assistant, whose first open must stay small. Nothing here imports a
 * value from `ai`, `@ai-sdk/react`, `@cloudflare/ai-chat` or `agents`.
 */
export { ChatView, type ChatViewProps } from "./chat-view.tsx";
export { Composer } from "./composer.tsx";
export {
  applyChunk,
  LightChat,
  type LightChatOptions,
  type LightChatSnapshot,
  newTurn,
  type SocketLike,
  type StreamChunk,
  socketScheme,
} from "./light-chat.ts";
export { isBillingRefusal, type ParleyError } from "./protocol.ts";
export type { CitationView, OpenSource, SourcePassage } from "./reply-sources.tsx";
export {
  type SessionLinkProps,
  SessionSidebar,
  type SessionSummary,
} from "./session-sidebar.tsx";
export { SuggestedPrompts } from "./suggested-prompts.tsx";
export { type LightChatState, type UseLightChatOptions, useLightChat } from "./use-light-chat.ts";
export type { ParleyChatState } from "./use-parley-chat.ts";
