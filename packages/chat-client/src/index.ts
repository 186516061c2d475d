/**
 * @parley/chat-client: the agents SDK chat protocol (agents 0.32.0, @cloudflare/ai-chat 0.12.2)
 * from Node over a real WebSocket, for tests, tools and the `pnpm chat` terminal client.
 */
export {
  ChatClient,
  ChatClientError,
  type ChatClientEvents,
  type ChatClientOptions,
  connectChat,
  type DisconnectInfo,
  type ReconnectPolicy,
  type SendOptions,
  type WebSocketConstructor,
} from "./chat-client.ts";
export {
  type ChatClearFrame,
  type ChatMessagesFrame,
  type ChatResponseFrame,
  cancelFrame,
  chatRequestFrame,
  chunkOf,
  clearFrame,
  FrameType,
  getMessagesUrl,
  type IdentityFrame,
  type MessageUpdatedFrame,
  type OtherFrame,
  type ParsedFrame,
  parseServerFrame,
  resumeAckFrame,
  resumeRequestFrame,
  type ServerFrame,
  type StreamPendingFrame,
  type StreamResumeNoneFrame,
  type StreamResumingFrame,
  type TurnOutcome,
  webSocketUrl,
} from "./protocol.ts";
export { type ToolCall, Turn, type TurnResult } from "./turn.ts";
