/**
 * @parley/dev-model: a local OpenRouter-compatible model server with deterministic replies.
 * `startDevModel` opens a socket; everything else exported here is pure (also reachable without
 * node:http through the `./pricing`, `./reply` and `./models` entries).
 */

export {
  type Dialect,
  type ErrorType,
  errorTypeForStatus,
  isErrorType,
  MID_STREAM_ERROR,
  MID_STREAM_ERRORS,
} from "./errors.ts";
export type { Generation } from "./generations.ts";
export {
  DEV_FAST_MODEL_ID,
  DEV_LARGE_MODEL_ID,
  DEV_LOCAL_MODEL_ID,
  DEV_MODELS,
  type DevModelSpec,
  listedModels,
  modelSpec,
  type OpenRouterModel,
  type OpenRouterPricing,
  UNLISTED_MODEL,
} from "./models.ts";
export {
  type Behaviour,
  type CompletionPlan,
  DEFAULT_BEHAVIOUR,
  DEFAULT_RETRY_AFTER_SECONDS,
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
  type CacheTokens,
  cacheDiscount,
  computeCost,
  costParts,
  DEFAULT_PRICE,
  DEV_MODEL_ID,
  formatPrice,
  type ModelPrice,
  NO_CACHE,
  PRICES,
  priceFor,
} from "./pricing.ts";
export {
  cacheRequested,
  DEFAULT_PROMPT_CACHE_MIN_TOKENS,
  DEFAULT_PROMPT_CACHE_TTL_MS,
  PromptCache,
  type PromptCacheOptions,
} from "./prompt-cache.ts";
export type { RateLimit } from "./rate-limit.ts";
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
  DEFAULT_GENERATION_DELAY_MS,
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
