/**
 * @parley/dev-model: a local OpenRouter-compatible model server with deterministic replies.
 * `startDevModel` opens a socket; everything else exported here is pure (also reachable without
 * node:http through the `./pricing` and `./reply` entries).
 */
export type { Generation } from "./generations.ts";
export {
  type Behaviour,
  type CompletionPlan,
  DEFAULT_BEHAVIOUR,
  type Fault,
  type FinishReason,
  lastUserText,
  type PlanTotals,
  planCompletion,
  TOOL_ARGUMENT_CHARS_PER_TOKEN,
  totalsAfter,
  type Unit,
} from "./plan.ts";
export {
  computeCost,
  costParts,
  DEFAULT_PRICE,
  DEV_MODEL_ID,
  formatPrice,
  type ModelPrice,
  PRICES,
  priceFor,
} from "./pricing.ts";
export {
  DEFAULT_REASONING_TOKENS,
  DEFAULT_REPLY_TOKENS,
  devMarkdownReply,
  devReasoning,
  devReply,
  devToolResultReply,
  ECHO_WORD_MAX_CHARS,
  ECHO_WORDS,
  MARKDOWN_REPLY,
  markdownWords,
  reasoningWords,
  replyWords,
  toolResultWords,
  words,
} from "./reply.ts";
export {
  type ChatMessage,
  type ChatRequest,
  estimatePromptTokens,
  parseChatRequest,
} from "./request.ts";
export {
  type DevModel,
  type DevModelOptions,
  PROCESSING_COMMENT,
  PROVIDER_NAME,
  type RecordedRequest,
  startDevModel,
} from "./server.ts";
export {
  DEFAULT_FAULT_AFTER_TOKENS,
  parseTriggers,
  stripTriggers,
  type Trigger,
} from "./triggers.ts";
