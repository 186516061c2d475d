/**
 * Generation records, shaped as OpenRouter's `GET /api/v1/generation` returns them (`data`), kept
 * in memory and bounded: the oldest is dropped once `limit` is reached.
 */
export type Generation = {
  readonly id: string;
  readonly upstream_id: string | null;
  readonly total_cost: number;
  readonly cache_discount: number | null;
  readonly upstream_inference_cost: number | null;
  readonly created_at: string;
  readonly model: string;
  readonly app_id: number | null;
  readonly streamed: boolean;
  readonly cancelled: boolean;
  readonly provider_name: string;
  readonly latency: number;
  readonly moderation_latency: number | null;
  readonly generation_time: number;
  readonly finish_reason: string | null;
  readonly native_finish_reason: string | null;
  readonly tokens_prompt: number;
  readonly tokens_completion: number;
  readonly native_tokens_prompt: number;
  readonly native_tokens_completion: number;
  readonly native_tokens_completion_images: number;
  readonly native_tokens_reasoning: number;
  readonly native_tokens_cached: number;
  readonly num_media_prompt: number | null;
  readonly num_input_audio_prompt: number | null;
  readonly num_media_completion: number;
  readonly num_search_results: number | null;
  readonly origin: string;
  readonly usage: number;
  readonly is_byok: boolean;
  readonly external_user: string | null;
  readonly api_type: string;
  readonly router: string | null;
};

export const DEFAULT_GENERATION_LIMIT = 10_000;

export class GenerationStore {
  readonly #byId = new Map<string, Generation>();
  readonly #limit: number;

  constructor(limit = DEFAULT_GENERATION_LIMIT) {
    this.#limit = Math.max(1, limit);
  }

  add(generation: Generation): void {
    this.#byId.delete(generation.id);
    this.#byId.set(generation.id, generation);
    while (this.#byId.size > this.#limit) {
      const oldest = this.#byId.keys().next();
      if (oldest.done) break;
      this.#byId.delete(oldest.value);
    }
  }

  get(id: string): Generation | undefined {
    return this.#byId.get(id);
  }

  all(): readonly Generation[] {
    return [...this.#byId.values()];
  }

  clear(): void {
    this.#byId.clear();
  }
}
