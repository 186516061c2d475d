/**
 * Credits: grants, top-ups and adjustments, each posted once per idempotency key with the lot it
 * opens or draws (lots.ts); running totals a source reports (Stripe's refunded amount) brought to
 * their total; and grants expired by the account's alarm. Every credit can cross a low-balance
 * threshold the other way a debit can, so each fires its alerts like a call does.
 */

import type { AlertTriggers } from "./alert-triggers.ts";
import { assertId, assertTime } from "./input-checks.ts";
import type { LedgerBook } from "./ledger-book.ts";
import type { AlertRow, EntryKind, EntryRow, LotRow } from "./ledger-store.ts";
import {
  assertGrantTerms,
  defaultTerms,
  expiryKey,
  type GrantTerms,
  lotId,
  sameTerms,
} from "./lots.ts";
import { assertMicros, assertPositiveMicros, subtractMicros } from "./money.ts";

export interface PostInput {
  kind: Exclude<EntryKind, "usage">;
  /** Positive for `grant` and `topup`; non-zero for `adjustment`. */
  amountMicros: number;
  idempotencyKey: string;
  reference?: string | null;
  memo?: string | null;
  now: number;
  /**
   * The lot a credit opens. Absent: a top-up is `top_up`, a grant `promotion`, a positive
   * adjustment `adjustment`, each with no expiry. Ignored for a debit.
   */
  grant?: GrantTerms;
  /** For a debit (a refund, a dispute): the funding whose lot it takes from first. */
  fundingRef?: string | null;
}

export interface PostCumulativeInput {
  kind: Exclude<EntryKind, "usage">;
  /** Groups the entries; also the prefix of each entry's idempotency key. */
  reference: string;
  /** The total the entries under `reference` must reach (negative for refunds). */
  totalMicros: number;
  memo?: string | null;
  now: number;
  /** For debits: the funding whose lot they take from first (the refunded top-up's). */
  fundingRef?: string | null;
}

export interface ExpireGrantsResult {
  /** Lots this call expired, each with its expiry entry (null when nothing was left of it). */
  expired: { lot: LotRow; entry: EntryRow | null }[];
  /** The soonest expiry among lots still live, for the next alarm; null when none. */
  nextExpiresAt: number | null;
  alerts: AlertRow[];
}

export type PostResult =
  | {
      ok: true;
      /** The entry posted (or replayed); null when there was nothing left to post. */
      entry: EntryRow | null;
      replayed: boolean;
      alerts: AlertRow[];
    }
  | { ok: false; reason: "conflict"; existing: EntryRow };

/** One ledger's credits; each operation runs in its own store transaction. */
export class Credits {
  readonly #book: LedgerBook;
  readonly #alerts: AlertTriggers;

  constructor(book: LedgerBook, alerts: AlertTriggers) {
    this.#book = book;
    this.#alerts = alerts;
  }

  /**
   * Posts a grant, top-up or adjustment once per idempotency key. Replaying the key with the same
   * kind, amount, reference and memo returns the original entry; anything else is a conflict.
   * Returns the alerts newly fired (a negative adjustment can cross the low-balance threshold).
   */
  post(input: PostInput): PostResult {
    assertId(input.idempotencyKey, "idempotencyKey");
    assertTime(input.now, "now");
    if (input.kind === "adjustment") {
      assertMicros(input.amountMicros, "amountMicros");
      if (input.amountMicros === 0) throw new RangeError("an adjustment must not be zero");
    } else {
      assertPositiveMicros(input.amountMicros, "amountMicros");
    }
    const terms = input.grant ?? defaultTerms(input.kind);
    assertGrantTerms(terms);
    const reference = input.reference ?? null;
    const memo = input.memo ?? null;
    return this.#book.store.transact((): PostResult => {
      const existing = this.#book.store.getEntryByKey(input.idempotencyKey);
      if (existing !== null) {
        // A replayed grant names the same terms as its lot (accounts from before lots have none).
        const lot = existing.amountMicros > 0 ? this.#book.store.getLot(lotId(existing.seq)) : null;
        const same =
          existing.kind === input.kind &&
          existing.amountMicros === input.amountMicros &&
          existing.reference === reference &&
          existing.memo === memo &&
          (lot === null || sameTerms(lot, terms));
        return same
          ? { ok: true, entry: existing, replayed: true, alerts: [] }
          : { ok: false, reason: "conflict", existing };
      }
      const entry = this.#book.postEntry(
        {
          kind: input.kind,
          amountMicros: input.amountMicros,
          idempotencyKey: input.idempotencyKey,
          reference,
          memo,
          createdAt: input.now,
        },
        { terms, fundingRef: input.fundingRef ?? null },
      );
      return {
        ok: true,
        entry,
        replayed: false,
        alerts: this.#alerts.collect(input.now, null, null),
      };
    });
  }

  /**
   * Brings the sum of entries under `reference` to `totalMicros`, for sources that report a running
   * total (Stripe's cumulative `amount_refunded`). Posts only the difference, keyed by reference and
   * total, and only in the direction of the total's sign: a total already reached or passed (a
   * retried or out-of-order event) posts nothing. So retries and reordering never double-count.
   */
  postCumulative(input: PostCumulativeInput): PostResult {
    assertId(input.reference, "reference");
    assertMicros(input.totalMicros, "totalMicros");
    assertTime(input.now, "now");
    if (input.kind !== "adjustment" && input.totalMicros <= 0) {
      throw new RangeError(`${input.kind} totals must be positive`);
    }
    return this.#book.store.transact((): PostResult => {
      const idempotencyKey = `${input.reference}#${input.totalMicros}`;
      const existing = this.#book.store.getEntryByKey(idempotencyKey);
      if (existing !== null) return { ok: true, entry: existing, replayed: true, alerts: [] };
      const current = this.#book.store.sumEntriesByReference(input.reference);
      const delta = subtractMicros(input.totalMicros, current);
      // A total of 0 has no direction: nothing to post.
      const towardsTotal = input.totalMicros < 0 ? delta < 0 : input.totalMicros > 0 && delta > 0;
      if (!towardsTotal) return { ok: true, entry: null, replayed: false, alerts: [] };
      const entry = this.#book.postEntry(
        {
          kind: input.kind,
          amountMicros: delta,
          idempotencyKey,
          reference: input.reference,
          memo: input.memo ?? null,
          createdAt: input.now,
        },
        { terms: defaultTerms(input.kind), fundingRef: input.fundingRef ?? null },
      );
      return {
        ok: true,
        entry,
        replayed: false,
        alerts: this.#alerts.collect(input.now, null, null),
      };
    });
  }

  /**
   * Expires every live lot whose `expiresAt ≤ now`, once: an entry of minus what is left of it
   * (nothing when it is empty), keyed by the lot (`grant-expiry:<id>`), so a second run, a replay
   * or a reset object never takes it twice, and an expiry never takes more than its lot's
   * remainder. Call it from the account's alarm; schedule the next one at `nextExpiresAt`.
   */
  expireGrants(now: number): ExpireGrantsResult {
    assertTime(now, "now");
    return this.#book.store.transact((): ExpireGrantsResult => {
      this.#book.openLots(now);
      const expired: ExpireGrantsResult["expired"] = [];
      for (const lot of this.#book.store.listDueLots(now)) {
        const key = expiryKey(lot.id);
        let entry = this.#book.store.getEntryByKey(key);
        if (entry === null && lot.remainingMicros > 0) {
          entry = this.#book.postEntry(
            {
              kind: "adjustment",
              amountMicros: -lot.remainingMicros,
              idempotencyKey: key,
              reference: lot.id,
              memo: "Grant expired",
              createdAt: now,
            },
            { lot },
          );
        }
        this.#book.lots.markExpired(lot, now, entry?.seq ?? null);
        expired.push({ lot: { ...lot, remainingMicros: 0, expiredAt: now }, entry });
      }
      const alerts = expired.some((one) => one.entry !== null)
        ? this.#alerts.collect(now, null, null)
        : [];
      return { expired, nextExpiresAt: this.#book.store.nextLotExpiry(), alerts };
    });
  }
}
