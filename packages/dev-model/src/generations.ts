/**
 * Generation records, shaped as OpenRouter's `GET /api/v1/generation` returns them (`data`), kept
 * in memory and bounded: the oldest is dropped once `limit` is reached. Each record becomes
 * visible to the public endpoint at its own time (OpenRouter records a generation a little after it
 * ends); the control surface sees every record at once.
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
  readonly #visibleAt = new Map<string, number>();
  readonly #limit: number;

  constructor(limit = DEFAULT_GENERATION_LIMIT) {
    this.#limit = Math.max(1, limit);
  }

  /** Keeps `generation`; `visible` reports it from `visibleAt` (ms since the epoch) on. */
  add(generation: Generation, visibleAt = 0): void {
    this.#byId.delete(generation.id);
    this.#byId.set(generation.id, generation);
    this.#visibleAt.set(generation.id, visibleAt);
    while (this.#byId.size > this.#limit) {
      const oldest = this.#byId.keys().next();
      if (oldest.done) break;
      this.#byId.delete(oldest.value);
      this.#visibleAt.delete(oldest.value);
    }
  }

  /** The record, whether or not the public endpoint may show it yet. */
  get(id: string): Generation | undefined {
    return this.#byId.get(id);
  }

  /** The record if the public endpoint may show it at `now`. */
  visible(id: string, now = Date.now()): Generation | undefined {
    const visibleAt = this.#visibleAt.get(id);
    return visibleAt !== undefined && visibleAt <= now ? this.#byId.get(id) : undefined;
  }

  all(): readonly Generation[] {
    return [...this.#byId.values()];
  }

  clear(): void {
    this.#byId.clear();
    this.#visibleAt.clear();
  }
}
