/**
 * What one turn's tool source calls are charged, for its reply's metadata (`toolPriceMicros`,
 * part of its `priceMicros`). A call's charge is decided when the call closes
 * (`ToolCallMeter.close`: its price if its request may have reached the tenant's server, 0 if
 * not) and its round later settles exactly that amount on the ledger under `tool:<callId>`; so
 * the sum here is what billing's activity lists for the turn's calls, known as soon as each call
 * has ended, without waiting for the round.
 *
 * Made per turn with its tools (a tool approval's continuation builds its own): a call made in a
 * turn counts in that turn's reply once, whoever closes it.
 */
export class ToolCharges {
  #micros = 0;
  readonly #later = new Set<Promise<unknown>>();

  /** A call closed now, charged `micros` (0 for a free call or one that never went out). */
  add(micros: number): void {
    this.#micros += micros;
  }

  /**
   * A call that closes later (the person stopped the reply while it ran: it is closed when its
   * answer or timeout comes). `settled` waits for it.
   */
  later(charge: Promise<number | null>): void {
    const counted = charge.then(
      (micros) => {
        if (micros !== null) this.#micros += micros;
      },
      () => undefined,
    );
    this.#later.add(counted);
    void counted.finally(() => this.#later.delete(counted));
  }

  /** What the turn's calls closed so far are charged. */
  get micros(): number {
    return this.#micros;
  }

  /** What the turn's calls are charged once every call of it is closed. */
  async settled(): Promise<number> {
    while (this.#later.size > 0) await Promise.allSettled([...this.#later]);
    return this.#micros;
  }
}
