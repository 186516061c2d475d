/**
 * The models the dev model serves: each listed exactly as OpenRouter's `GET /api/v1/models` lists
 * one, with what the dev model does for it (its wire, pace, prompt cache, reasoning). Pure module:
 * the platform's default model catalogue is built from `DEV_MODELS`.
 */

/** OpenRouter's `pricing`: decimal strings of dollars per token (per request for `request`). */
export type OpenRouterPricing = {
  readonly prompt: string;
  readonly completion: string;
  readonly request: string;
  readonly image: string;
  readonly web_search: string;
  readonly internal_reasoning: string;
  readonly input_cache_read: string;
  readonly input_cache_write: string;
};

/** One entry of `GET /api/v1/models`' `data`, field for field as OpenRouter publishes it. */
export type OpenRouterModel = {
  readonly id: string;
  readonly canonical_slug: string;
  readonly hugging_face_id: string;
  readonly name: string;
  readonly created: number;
  readonly description: string;
  readonly context_length: number;
  readonly architecture: {
    readonly modality: string;
    readonly input_modalities: readonly string[];
    readonly output_modalities: readonly string[];
    readonly tokenizer: string;
    readonly instruct_type: string | null;
  };
  readonly pricing: OpenRouterPricing;
  readonly top_provider: {
    readonly context_length: number;
    readonly max_completion_tokens: number | null;
    readonly is_moderated: boolean;
  };
  readonly per_request_limits: null;
  readonly supported_parameters: readonly string[];
  readonly default_parameters: null;
};

/**
 * A model the dev model serves.
 *
 * `api` says which wire it speaks: `openrouter` is OpenRouter's (`usage.cost`, `X-Generation-Id`,
 * a generation record, `: OPENROUTER PROCESSING` comments); `openai-compatible` is a plain
 * OpenAI-compatible server such as llama.cpp, Ollama or vLLM: usage without any cost, no generation
 * id or record, and a streamed usage chunk only when the request asks with
 * `stream_options: { include_usage: true }`. Its price is the operator's to set in a price table;
 * `listing.pricing` carries the figure the dev catalogue uses for it.
 */
export type DevModelSpec = {
  readonly id: string;
  readonly api: "openrouter" | "openai-compatible";
  /** True when replies carry `usage.cost` and a generation record (the `openrouter` wire). */
  readonly reportsCost: boolean;
  /** Answers `reasoning` / `include_reasoning` / `[[reasoning]]` with reasoning tokens. */
  readonly reasoning: boolean;
  /**
   * On a step that reasons and ends in tool calls, also sends a `reasoning.encrypted` detail, and
   * refuses (400) the next request of the tool loop if that detail did not come back unchanged.
   */
  readonly encryptedReasoning: boolean;
  /** Reports prompt-cache reads and writes (`prompt_tokens_details`) and prices them. */
  readonly promptCache: boolean;
  /** Wait before the first token when the server sets no `latencyMs` of its own. */
  readonly latencyMs: number;
  /** Pace when the server sets no `tokensPerSecond` of its own (0: as fast as possible). */
  readonly tokensPerSecond: number;
  readonly listing: OpenRouterModel;
};

export const DEV_MODEL_ID = "parley/dev";
export const DEV_FAST_MODEL_ID = "parley/dev-fast";
export const DEV_LARGE_MODEL_ID = "parley/dev-large";
export const DEV_LOCAL_MODEL_ID = "parley/dev-local";

/** `created` of every listed model (2025-01-01), so the list is the same on every run. */
const CREATED = 1_735_689_600;

const TEXT_ARCHITECTURE = {
  modality: "text->text",
  input_modalities: ["text"],
  output_modalities: ["text"],
  tokenizer: "Other",
  instruct_type: null,
} as const;

const BASE_PARAMETERS = ["max_tokens", "tool_choice", "tools"] as const;
const REASONING_PARAMETERS = ["include_reasoning", "reasoning"] as const;

type ListingInput = {
  id: string;
  name: string;
  description: string;
  contextLength: number;
  maxCompletionTokens: number | null;
  pricing: Partial<OpenRouterPricing> & Pick<OpenRouterPricing, "prompt" | "completion">;
  reasoning: boolean;
};

/** A listing in OpenRouter's shape; prices not given are "0", as OpenRouter writes them. */
export function openRouterListing(input: ListingInput): OpenRouterModel {
  return {
    id: input.id,
    canonical_slug: input.id,
    hugging_face_id: "",
    name: input.name,
    created: CREATED,
    description: input.description,
    context_length: input.contextLength,
    architecture: TEXT_ARCHITECTURE,
    pricing: {
      request: "0",
      image: "0",
      web_search: "0",
      internal_reasoning: "0",
      input_cache_read: "0",
      input_cache_write: "0",
      ...input.pricing,
    },
    top_provider: {
      context_length: input.contextLength,
      max_completion_tokens: input.maxCompletionTokens,
      is_moderated: false,
    },
    per_request_limits: null,
    supported_parameters: [
      ...(input.reasoning ? REASONING_PARAMETERS : []),
      ...BASE_PARAMETERS,
    ].sort(),
    default_parameters: null,
  };
}

function spec(
  behaviour: Omit<DevModelSpec, "id" | "listing" | "reportsCost">,
  listing: Omit<ListingInput, "reasoning">,
): DevModelSpec {
  return {
    id: listing.id,
    ...behaviour,
    reportsCost: behaviour.api === "openrouter",
    listing: openRouterListing({ ...listing, reasoning: behaviour.reasoning }),
  };
}

/**
 * Every dev model id, with its price and behaviour. `parley/dev` is the one tests everywhere use:
 * instant, reasoning on request, no prompt cache, $1 / $2 per million tokens.
 */
export const DEV_MODELS: readonly DevModelSpec[] = Object.freeze([
  spec(
    {
      api: "openrouter",
      reasoning: true,
      encryptedReasoning: false,
      promptCache: false,
      latencyMs: 0,
      tokensPerSecond: 0,
    },
    {
      id: DEV_MODEL_ID,
      name: "Parley Dev Model",
      description: "The instant dev model every test uses: reports usage.cost, reasons on request.",
      contextLength: 128_000,
      maxCompletionTokens: null,
      pricing: { prompt: "0.000001", completion: "0.000002" },
    },
  ),
  spec(
    {
      api: "openrouter",
      reasoning: false,
      encryptedReasoning: false,
      promptCache: true,
      latencyMs: 50,
      tokensPerSecond: 250,
    },
    {
      id: DEV_FAST_MODEL_ID,
      name: "Parley Dev Fast",
      description:
        "Fast and cheap: reports usage.cost and prompt-cache reads and writes; no reasoning.",
      contextLength: 128_000,
      maxCompletionTokens: 16_384,
      pricing: {
        prompt: "0.0000001",
        completion: "0.0000004",
        input_cache_read: "0.000000025",
        input_cache_write: "0.000000125",
      },
    },
  ),
  spec(
    {
      api: "openrouter",
      reasoning: true,
      encryptedReasoning: true,
      promptCache: true,
      latencyMs: 300,
      tokensPerSecond: 80,
    },
    {
      id: DEV_LARGE_MODEL_ID,
      name: "Parley Dev Large",
      description:
        "Slow and pricey: reports usage.cost and prompt-cache use, reasons, and carries encrypted reasoning across a tool loop.",
      contextLength: 200_000,
      maxCompletionTokens: 64_000,
      pricing: {
        prompt: "0.000003",
        completion: "0.000015",
        input_cache_read: "0.0000003",
        input_cache_write: "0.00000375",
      },
    },
  ),
  spec(
    {
      api: "openai-compatible",
      reasoning: false,
      encryptedReasoning: false,
      promptCache: false,
      latencyMs: 0,
      tokensPerSecond: 120,
    },
    {
      id: DEV_LOCAL_MODEL_ID,
      name: "Parley Dev Local (OpenAI-compatible)",
      description:
        "Like a local llama.cpp, Ollama or vLLM server: plain OpenAI usage, no cost reported, no generation record. Priced from the price table.",
      contextLength: 32_768,
      maxCompletionTokens: 4_096,
      pricing: { prompt: "0.0000002", completion: "0.0000006" },
    },
  ),
]);

/**
 * Other model ids the dev model answers at public OpenRouter list prices (so costs look realistic),
 * on OpenRouter's wire, instantly, reasoning on request, without a prompt cache.
 */
const PRICED_ELSEWHERE: readonly Omit<ListingInput, "reasoning" | "description">[] = [
  {
    id: "openai/gpt-4o-mini",
    name: "OpenAI: GPT-4o-mini",
    contextLength: 128_000,
    maxCompletionTokens: 16_384,
    pricing: { prompt: "0.00000015", completion: "0.0000006" },
  },
  {
    id: "openai/gpt-4.1",
    name: "OpenAI: GPT-4.1",
    contextLength: 1_047_576,
    maxCompletionTokens: 32_768,
    pricing: { prompt: "0.000002", completion: "0.000008" },
  },
  {
    id: "anthropic/claude-sonnet-4.5",
    name: "Anthropic: Claude Sonnet 4.5",
    contextLength: 1_000_000,
    maxCompletionTokens: 64_000,
    pricing: { prompt: "0.000003", completion: "0.000015" },
  },
  {
    id: "google/gemini-2.5-flash",
    name: "Google: Gemini 2.5 Flash",
    contextLength: 1_048_576,
    maxCompletionTokens: 65_535,
    pricing: { prompt: "0.0000003", completion: "0.0000025" },
  },
];

const LIKE_DEV = {
  api: "openrouter",
  reasoning: true,
  encryptedReasoning: false,
  promptCache: false,
  latencyMs: 0,
  tokensPerSecond: 0,
} as const;

const ALL: ReadonlyMap<string, DevModelSpec> = new Map(
  [
    ...DEV_MODELS,
    ...PRICED_ELSEWHERE.map((m) =>
      spec(LIKE_DEV, {
        ...m,
        description: "Served by the Parley dev model server at this model's public list price.",
      }),
    ),
  ].map((m) => [m.id, m]),
);

/** Any model id the dev model does not list: `parley/dev`'s behaviour and price. */
export const UNLISTED_MODEL: DevModelSpec = spec(LIKE_DEV, {
  id: "unlisted",
  name: "Unlisted model (dev price)",
  description: "Any model id the dev model does not list.",
  contextLength: 128_000,
  maxCompletionTokens: null,
  pricing: { prompt: "0.000001", completion: "0.000002" },
});

/** The spec of `id`, or `UNLISTED_MODEL`'s behaviour and price under that id. */
export function modelSpec(id: string): DevModelSpec {
  return ALL.get(id) ?? UNLISTED_MODEL;
}

/** Every listed model, as `GET /api/v1/models` returns them (`data`). */
export function listedModels(): readonly OpenRouterModel[] {
  return [...ALL.values()].map((m) => m.listing);
}
