/**
 * @parley/billing: the pure billing core. Integer micro-dollar money, the price table and markup,
 * the per-org credit ledger with two-phase holds, and the Stripe event mapping. No I/O and no
 * platform APIs: the BillingAccount Durable Object runs it over SQLite, tests over memory.
 */

export type { BillingSettings } from "./account-store.ts";
export { AccountStore, DEFAULT_LIMIT_WARNING_PCT } from "./account-store.ts";
export type { AlertDelivery, DueAlert } from "./alert-outbox.ts";
export { ALERT_ATTEMPTS, AlertOutbox, DELIVERY_LEASE_MS } from "./alert-outbox.ts";
export { alertMessage, alertPeriodLabel, autoTopUpFailurePeriod, formatUsd } from "./alerts.ts";
export type { Allowance, AllowancePeriod } from "./allowance.ts";
export { AllowanceStore, allowanceGrant, allowancePeriod } from "./allowance.ts";
export type {
  AutoTopUpCharge,
  AutoTopUpChargeStatus,
  AutoTopUpPause,
  AutoTopUpSettings,
  AutoTopUpState,
  SavedCard,
} from "./auto-top-up.ts";
export { AUTO_TOP_UP_OFF, autoTopUpKey, checkAutoTopUpSettings } from "./auto-top-up.ts";
export { AutoTopUpStore } from "./auto-top-up-store.ts";
export type {
  ExpireResult,
  ReleaseResult,
  ReserveInput,
  ReserveResult,
  SettleResult,
} from "./call-holds.ts";
export type {
  OpenRouterPricing,
  PriceConversion,
  PriceRounding,
  PricingConversion,
} from "./catalogue-pricing.ts";
export {
  microsPerCall,
  microsPerMTok,
  modelPriceFromPricing,
  perTokenDollarsToMicrosPerMTok,
  pricingFromModelPrice,
  scaleDecimal,
  unscaleDecimal,
} from "./catalogue-pricing.ts";
export type {
  ExpireGrantsResult,
  PostCumulativeInput,
  PostInput,
  PostResult,
} from "./credits.ts";
export type { Forecast } from "./forecast.ts";
export { FORECAST_WINDOW_DAYS, forecastDays, forecastRunway, runwayBelow } from "./forecast.ts";
export type {
  GrantBounds,
  LeaseInput,
  LeaseLimit,
  LeasePolicy,
  LeaseReport,
  LeaseResult,
  LeaseSettled,
  LeaseUsage,
  LocalLease,
} from "./lease.ts";
export {
  afterReport,
  canDraw,
  DEFAULT_LEASE_POLICY,
  isLeaseId,
  LEASE_PREFIX,
  leaseAsk,
  leaseId,
  nextExpectedCall,
  shouldRenew,
  sizeGrant,
} from "./lease.ts";
export { CreditLedger } from "./ledger.ts";
export type { Balance, ReconcileReport } from "./ledger-book.ts";
export type { LedgerConfig } from "./ledger-config.ts";
export { DEFAULT_LEDGER_CONFIG } from "./ledger-config.ts";
export { utcDay, utcMonth } from "./ledger-counters.ts";
export type {
  AlertKind,
  AlertRow,
  EntryKind,
  EntryRow,
  GrantSource,
  HoldRow,
  HoldStatus,
  LedgerStore,
  LotRow,
  NewEntryRow,
  UsageOutcome,
  UsageRow,
} from "./ledger-store.ts";
export { GRANT_SOURCES } from "./ledger-store.ts";
export {
  LEDGER_SQLITE_SCHEMA,
  toAlert,
  toEntry,
  toHold,
  toLot,
  toUsage,
} from "./ledger-tables.ts";
export type { LimitPeriod, LimitRule, LimitRules, LimitSubject } from "./limit-rules.ts";
export {
  LIMIT_PERIODS,
  LIMIT_SUBJECTS,
  LimitRuleStore,
  NO_LIMIT_RULES,
  periodKey,
  periodResetsAt,
  periodStart,
} from "./limit-rules.ts";
export type { GrantTerms, LotDraw } from "./lots.ts";
export { DEFAULT_GRANT_PRIORITY, expiryKey, LEGACY_LOT_ID, lotId } from "./lots.ts";
export { MemoryLedgerStore } from "./memory-ledger-store.ts";
export {
  addMicros,
  assertMicros,
  assertNonNegativeMicros,
  assertPositiveMicros,
  centsToMicros,
  dollarsToMicrosCeil,
  formatMicros,
  MICROS_PER_CENT,
  MICROS_PER_DOLLAR,
  microsToCents,
  subtractMicros,
  sumDollarsToMicrosCeil,
} from "./money.ts";
export type { MaxCallCostInput, ModelPrice, PriceTable, TokenUsage } from "./pricing.ts";
export {
  applyMarkup,
  assertPriceTable,
  BPS_DENOMINATOR,
  costFromTokens,
  maxCallCostMicros,
  priceForModel,
} from "./pricing.ts";
export type { PaymentReversals, ReversalReport } from "./reversals.ts";
export { ReversalStore, reversalReference, reversalTotals } from "./reversals.ts";
export type { Attribution, SettleInput } from "./settlement.ts";
export type { EndUserLimits, PrincipalLimit, SpendLimitScope } from "./spend-limits.ts";
export { scopePeriod } from "./spend-limits.ts";
export type { SqlExecutor, SqlValue } from "./sql.ts";
export { SqlLedgerStore } from "./sql-ledger-store.ts";
export type { PricedStep, StepPrices, StepUsage } from "./step-price.ts";
export {
  addTokens,
  noTokens,
  priceCutCall,
  priceStep,
  reportedCostDollars,
  stepTokens,
  usableDollars,
} from "./step-price.ts";
export type {
  StripeAutoTopUpAction,
  StripeAutoTopUpFailedAction,
  StripeAutoTopUpStateAction,
  StripeCardSavedAction,
  StripeCreditAction,
  StripeDisputeAction,
  StripeEventMapping,
  StripeIgnoredEvent,
  StripeLedgerAction,
  StripeRefundAction,
  StripeRejectedEvent,
  StripeReversalAction,
  StripeTopupAction,
} from "./stripe-actions.ts";
export {
  applyStripeAction,
  isStripeCreditAction,
  isStripeLedgerAction,
  isStripeReversalAction,
  reversalReport,
} from "./stripe-actions.ts";
export type { StripeEvent } from "./stripe-events.ts";
export {
  HANDLED_STRIPE_EVENT_TYPES,
  mapStripeEvent,
  STRIPE_AUTO_TOP_UP_METADATA_KEY,
  STRIPE_ORG_METADATA_KEY,
} from "./stripe-events.ts";
export type { ActivityRowsQuery, UsageRowsQuery } from "./usage-events.ts";
export { activityRows, sessionSpend, spendBySession, usageRows } from "./usage-events.ts";
export type { UsageColumns, UsageReportQuery, UsageSums } from "./usage-rollups.ts";
export { createUsageRollups, USAGE_SUMS, usageGroups, usageReport } from "./usage-rollups.ts";
