/**
 * The `/v1` REST surface: Stripe's form parameters are checked and turned into store inputs,
 * objects go back with `expand[]` applied. Unknown parameters are refused as Stripe refuses them
 * (`parameter_unknown`), so a typo in the platform fails here and not first in production.
 */
import { invalidRequest, missingParam, noSuch, type StripeApiError } from "./errors.ts";
import {
  applyMetadataUpdate,
  expandPaths,
  type FormObject,
  type FormValue,
  metadataParam,
  metadataUpdateParam,
  optionalArray,
  optionalEnum,
  optionalInteger,
  optionalObject,
  optionalString,
  paramPath,
  rejectUnknown,
  requiredInteger,
  requiredString,
  unsettableString,
} from "./form.ts";
import type { StripeList, StripeObject } from "./objects.ts";
import {
  CUSTOMER_TEXT_FIELDS,
  type CustomerChanges,
  currencyDigits,
  formatAmount,
  type NewLineItem,
  type RequestInfo,
  type StandinStore,
} from "./store.ts";

export type ApiCall = { params: FormObject; request: RequestInfo };
type Handler = (store: StandinStore, call: ApiCall, id: string) => unknown;
/** The methods of Stripe's v1 API. GET and DELETE carry their parameters in the query string. */
type Method = "GET" | "POST" | "DELETE";
type Route = { method: Method; pattern: RegExp; handler: Handler };

const ID = "([^/]+)";

const routes: Route[] = [
  post("/v1/customers", createCustomer),
  get("/v1/customers", (store, call) =>
    list(store, call, "/v1/customers", store.customers(), { email: (c, v) => c.email === v }),
  ),
  get(`/v1/customers/${ID}`, (store, call, id) =>
    retrieve(store, call, store.customer(id) ?? store.deletedCustomer(id), "customer", id, "id"),
  ),
  post(`/v1/customers/${ID}`, updateCustomer),
  get(`/v1/customers/${ID}/payment_methods`, (store, call, id) => {
    if (store.customer(id) === undefined) throw noSuch("customer", id, { param: "customer" });
    const saved = store.paymentMethods().filter((pm) => pm.customer === id);
    return list(store, call, `/v1/customers/${id}/payment_methods`, saved, {
      type: (pm, v) => pm.type === v,
    });
  }),
  del(`/v1/customers/${ID}`, (store, call, id) => {
    rejectUnknown(call.params, new Set());
    return store.deleteCustomer(id, call.request);
  }),
  post("/v1/checkout/sessions", createCheckoutSession),
  get("/v1/checkout/sessions", (store, call) =>
    list(store, call, "/v1/checkout/sessions", store.checkoutSessions(), {
      customer: (s, v) => s.customer === v,
      payment_intent: (s, v) => s.payment_intent === v,
      status: (s, v) => s.status === v,
    }),
  ),
  get(`/v1/checkout/sessions/${ID}`, (store, call, id) =>
    retrieve(store, call, store.checkoutSession(id), "checkout.session", id, "session"),
  ),
  get(`/v1/checkout/sessions/${ID}/line_items`, (store, call, id) => {
    const items = store.lineItems(id);
    if (items === undefined) throw noSuch("checkout.session", id, { param: "session" });
    return list(store, call, `/v1/checkout/sessions/${id}/line_items`, [...items].reverse(), {});
  }),
  post(`/v1/checkout/sessions/${ID}/expire`, (store, call, id) => {
    rejectUnknown(call.params, new Set(["expand"]));
    return expand(store, store.expireCheckoutSession(id, call.request), expandPaths(call.params));
  }),
  get("/v1/payment_intents", (store, call) =>
    list(store, call, "/v1/payment_intents", store.paymentIntents(), {
      customer: (p, v) => p.customer === v,
    }),
  ),
  post("/v1/payment_intents", createPaymentIntent),
  get(`/v1/payment_intents/${ID}`, (store, call, id) =>
    retrieve(store, call, store.paymentIntent(id), "payment_intent", id, "intent"),
  ),
  get(`/v1/setup_intents/${ID}`, (store, call, id) =>
    retrieve(store, call, store.setupIntent(id), "setupintent", id, "intent"),
  ),
  get(`/v1/payment_methods/${ID}`, (store, call, id) =>
    retrieve(store, call, store.paymentMethod(id), "PaymentMethod", id, "payment_method"),
  ),
  post(`/v1/payment_methods/${ID}/detach`, (store, call, id) => {
    rejectUnknown(call.params, new Set(["expand"]));
    const paths = expandPaths(call.params);
    return expand(store, store.detachPaymentMethod(id, call.request), paths);
  }),
  get("/v1/charges", (store, call) =>
    list(store, call, "/v1/charges", store.charges(), {
      customer: (c, v) => c.customer === v,
      payment_intent: (c, v) => c.payment_intent === v,
    }),
  ),
  get(`/v1/charges/${ID}`, (store, call, id) =>
    retrieve(store, call, store.charge(id), "charge", id, "id"),
  ),
  get(`/v1/charges/${ID}/refunds`, (store, call, id) => {
    if (store.charge(id) === undefined) throw noSuch("charge", id, { param: "charge" });
    const refunds = store.refunds().filter((r) => r.charge === id);
    return list(store, call, `/v1/charges/${id}/refunds`, refunds, {});
  }),
  post("/v1/refunds", createRefund),
  get("/v1/refunds", (store, call) =>
    list(store, call, "/v1/refunds", store.refunds(), {
      charge: (r, v) => r.charge === v,
      payment_intent: (r, v) => r.payment_intent === v,
    }),
  ),
  get(`/v1/refunds/${ID}`, (store, call, id) =>
    retrieve(store, call, store.refund(id), "refund", id, "id"),
  ),
  get("/v1/disputes", (store, call) =>
    list(store, call, "/v1/disputes", store.disputes(), {
      charge: (d, v) => d.charge === v,
      payment_intent: (d, v) => d.payment_intent === v,
    }),
  ),
  get(`/v1/disputes/${ID}`, (store, call, id) =>
    retrieve(store, call, store.dispute(id), "dispute", id, "dispute"),
  ),
  post("/v1/billing_portal/sessions", createPortalSession),
  get("/v1/events", (store, call) => {
    const types = call.params.types;
    const typeList = typeof types === "string" ? [types] : Array.isArray(types) ? types : [];
    return list(
      store,
      call,
      "/v1/events",
      [...store.events()],
      { type: (e, v) => typeMatches(v, e.type) },
      typeList.length === 0
        ? undefined
        : {
            key: "types",
            keep: (e) => typeList.some((t) => typeof t === "string" && typeMatches(t, e.type)),
          },
    );
  }),
  get(`/v1/events/${ID}`, (store, call, id) =>
    retrieve(store, call, store.event(id), "event", id, "id"),
  ),
];

function route(method: Method, path: string, handler: Handler): Route {
  return { method, pattern: new RegExp(`^${path}$`), handler };
}

function get(path: string, handler: Handler): Route {
  return route("GET", path, handler);
}

function post(path: string, handler: Handler): Route {
  return route("POST", path, handler);
}

function del(path: string, handler: Handler): Route {
  return route("DELETE", path, handler);
}

/** Finds the handler for a `/v1` request, or undefined (Stripe's "Unrecognized request URL"). */
export function routeApi(
  method: string,
  pathname: string,
): ((store: StandinStore, call: ApiCall) => unknown) | undefined {
  for (const route of routes) {
    if (route.method !== method) continue;
    const match = route.pattern.exec(pathname);
    if (match === null) continue;
    let id: string;
    try {
      id = decodeURIComponent(match[1] ?? "");
    } catch {
      return undefined;
    }
    return (store, call) => route.handler(store, call, id);
  }
  return undefined;
}

function typeMatches(pattern: string, type: string): boolean {
  return pattern === type || (pattern.endsWith(".*") && type.startsWith(pattern.slice(0, -1)));
}

// --- Retrieval, lists and expansion ---

type Identified = { id: string; created?: number };

function retrieve(
  store: StandinStore,
  call: ApiCall,
  found: Identified | undefined,
  kind: string,
  id: string,
  param: string,
): unknown {
  rejectUnknown(call.params, new Set(["expand"]));
  if (found === undefined) throw noSuch(kind, id, { param });
  return expand(store, found, expandPaths(call.params));
}

const LIST_PARAMS = ["limit", "starting_after", "ending_before", "expand", "created"];

/** A Stripe list: newest first, `limit` 1-100 (default 10), cursors, `created` and filters. */
function list<T extends Identified>(
  store: StandinStore,
  call: ApiCall,
  url: string,
  oldestFirst: readonly T[],
  filters: Record<string, (item: T, value: string) => boolean>,
  extra?: { key: string; keep: (item: T) => boolean },
): StripeList<unknown> {
  const { params } = call;
  rejectUnknown(
    params,
    new Set([...LIST_PARAMS, ...Object.keys(filters), ...(extra ? [extra.key] : [])]),
  );
  const limit = optionalInteger(params, "limit", "", 1) ?? 10;
  if (limit > 100) {
    throw invalidRequest("This value must be less than or equal to 100.", { param: "limit" });
  }
  let items = [...oldestFirst].reverse();
  for (const [key, keep] of Object.entries(filters)) {
    const value = optionalString(params, key);
    if (value !== undefined) items = items.filter((item) => keep(item, value));
  }
  if (extra !== undefined) items = items.filter(extra.keep);
  items = items.filter(createdFilter(params));

  const after = optionalString(params, "starting_after");
  const before = optionalString(params, "ending_before");
  let page: T[];
  let hasMore: boolean;
  if (after !== undefined) {
    const index = items.findIndex((item) => item.id === after);
    if (index < 0) throw cursorMissing(after, "starting_after");
    page = items.slice(index + 1, index + 1 + limit);
    hasMore = index + 1 + limit < items.length;
  } else if (before !== undefined) {
    const index = items.findIndex((item) => item.id === before);
    if (index < 0) throw cursorMissing(before, "ending_before");
    page = items.slice(Math.max(0, index - limit), index);
    hasMore = index - limit > 0;
  } else {
    page = items.slice(0, limit);
    hasMore = items.length > limit;
  }
  const paths = expandPaths(params).map((path) => {
    if (!path.startsWith("data.")) {
      throw invalidRequest(`This property cannot be expanded (${path}).`, { param: "expand" });
    }
    return path.slice("data.".length);
  });
  return {
    object: "list",
    data: page.map((item) => expand(store, item, paths)),
    has_more: hasMore,
    url,
  };
}

function cursorMissing(id: string, param: string): StripeApiError {
  return invalidRequest(`No such object: '${id}'`, { code: "resource_missing", param });
}

function createdFilter(params: FormObject): (item: Identified) => boolean {
  const created = params.created;
  if (created === undefined) return () => true;
  if (typeof created === "string") {
    const exact = optionalInteger(params, "created");
    return (item) => (item.created ?? 0) === exact;
  }
  const range = optionalObject(params, "created");
  if (range === undefined) return () => true;
  rejectUnknown(range, new Set(["gt", "gte", "lt", "lte"]), "created");
  const gt = optionalInteger(range, "gt", "created");
  const gte = optionalInteger(range, "gte", "created");
  const lt = optionalInteger(range, "lt", "created");
  const lte = optionalInteger(range, "lte", "created");
  return ({ created = 0 }) =>
    (gt === undefined || created > gt) &&
    (gte === undefined || created >= gte) &&
    (lt === undefined || created < lt) &&
    (lte === undefined || created <= lte);
}

const MAX_EXPAND_DEPTH = 4;

/** A copy of `object` with each dotted path's id replaced by the object it names. */
export function expand(store: StandinStore, object: object, paths: readonly string[]): unknown {
  const copy = structuredClone(object) as Record<string, unknown>;
  for (const path of paths) {
    const segments = path.split(".");
    if (segments.length > MAX_EXPAND_DEPTH) {
      throw invalidRequest(
        `You cannot expand more than ${MAX_EXPAND_DEPTH} levels of a property (${path}).`,
        { param: "expand" },
      );
    }
    expandInto(store, copy, segments, path);
  }
  return copy;
}

function expandInto(
  store: StandinStore,
  target: Record<string, unknown>,
  segments: string[],
  path: string,
): void {
  const [field, ...rest] = segments;
  if (field === undefined) return;
  let value = target[field];
  if (field === "line_items" && target.object === "checkout.session") {
    const id = String(target.id);
    value ??= {
      object: "list",
      data: structuredClone(store.lineItems(id) ?? []),
      has_more: false,
      url: `/v1/checkout/sessions/${id}/line_items`,
    };
  } else if (field === "refunds" && target.object === "charge") {
    value ??= structuredClone(store.refundList(String(target.id)));
  } else if (typeof value === "string") {
    const found: StripeObject | undefined = store.resolve(value);
    if (found === undefined) {
      throw invalidRequest(
        `This property cannot be expanded (${path}): the stand-in does not keep ${value}.`,
        { param: "expand" },
      );
    }
    value = structuredClone(found);
  } else if (value === null) {
    return;
  } else if (typeof value !== "object" || value === undefined) {
    throw invalidRequest(`This property cannot be expanded (${path}).`, { param: "expand" });
  }
  target[field] = value;
  if (rest.length === 0 || typeof value !== "object" || value === null) return;
  const nested = value as Record<string, unknown>;
  if (nested.object === "list" && rest[0] === "data" && Array.isArray(nested.data)) {
    for (const item of nested.data as Record<string, unknown>[]) {
      expandInto(store, item, rest.slice(1), path);
    }
    return;
  }
  expandInto(store, nested, rest, path);
}

// --- Creation ---

const CUSTOMER_PARAMS = new Set([
  "email",
  "name",
  "description",
  "phone",
  "metadata",
  "expand",
  // Accepted and not modelled: they change nothing Parley reads.
  "address",
  "invoice_settings",
  "preferred_locales",
  "shipping",
  "tax_exempt",
]);

function createCustomer(store: StandinStore, call: ApiCall): unknown {
  const { params } = call;
  rejectUnknown(params, CUSTOMER_PARAMS);
  const email = optionalString(params, "email");
  if (email !== undefined) checkEmail(email, "email");
  const customer = store.createCustomer(
    {
      email: email ?? null,
      name: optionalString(params, "name") ?? null,
      description: optionalString(params, "description") ?? null,
      phone: optionalString(params, "phone") ?? null,
      metadata: metadataParam(params, "metadata"),
    },
    call.request,
  );
  return expand(store, customer, expandPaths(params));
}

/**
 * Stripe's update: only the parameters sent change. An empty value unsets a field (`email=`),
 * `metadata[key]=` unsets one key, `metadata=` all of them.
 */
function updateCustomer(store: StandinStore, call: ApiCall, id: string): unknown {
  const { params } = call;
  rejectUnknown(params, CUSTOMER_PARAMS);
  const paths = expandPaths(params);
  const customer = store.customer(id);
  if (customer === undefined) throw noSuch("customer", id, { param: "id" });
  const changes: CustomerChanges = {};
  for (const field of CUSTOMER_TEXT_FIELDS) {
    const value = unsettableString(params, field);
    if (value !== undefined) changes[field] = value;
  }
  if (typeof changes.email === "string") checkEmail(changes.email, "email");
  const metadata = metadataUpdateParam(params, "metadata");
  if (metadata !== undefined) changes.metadata = applyMetadataUpdate(customer.metadata, metadata);
  return expand(store, store.updateCustomer(id, changes, call.request), paths);
}

const SESSION_PARAMS = new Set([
  "mode",
  "line_items",
  "success_url",
  "cancel_url",
  "client_reference_id",
  "metadata",
  "customer",
  "customer_email",
  "customer_creation",
  "payment_intent_data",
  "setup_intent_data",
  "currency",
  "expires_at",
  "locale",
  "submit_type",
  "payment_method_types",
  "ui_mode",
  "expand",
  // Accepted and not modelled: they change neither the amount nor the flow.
  "allow_promotion_codes",
  "billing_address_collection",
  "consent_collection",
  "custom_fields",
  "custom_text",
  "customer_update",
  "invoice_creation",
  "payment_method_collection",
  "payment_method_configuration",
  "payment_method_options",
  "phone_number_collection",
  "saved_payment_method_options",
  "tax_id_collection",
]);

/** Real Stripe parameters that would change the amount or the flow, which the stand-in lacks. */
const SESSION_PARAMS_NOT_MODELLED = new Set([
  "automatic_tax",
  "discounts",
  "shipping_address_collection",
  "shipping_options",
  "subscription_data",
  "adaptive_pricing",
  "optional_items",
  "after_expiration",
]);

const PAYMENT_INTENT_DATA_PARAMS = new Set([
  "metadata",
  "description",
  "receipt_email",
  "statement_descriptor",
  "statement_descriptor_suffix",
]);

const SETUP_INTENT_DATA_PARAMS = new Set(["metadata", "description"]);

/** Parameters of payment mode that Stripe refuses in setup mode ("You can not pass ..."). */
const PAYMENT_MODE_ONLY = [
  "line_items",
  "payment_intent_data",
  "customer_creation",
  "submit_type",
  "allow_promotion_codes",
  "invoice_creation",
] as const;

/** Parameters of setup mode that Stripe refuses in payment mode. */
const SETUP_MODE_ONLY = ["setup_intent_data"] as const;

const LINE_ITEM_PARAMS = new Set(["price", "price_data", "quantity", "adjustable_quantity"]);
const PRICE_DATA_PARAMS = new Set([
  "currency",
  "unit_amount",
  "unit_amount_decimal",
  "product",
  "product_data",
  "tax_behavior",
  "recurring",
]);
const PRODUCT_DATA_PARAMS = new Set([
  "name",
  "description",
  "images",
  "metadata",
  "tax_code",
  "unit_label",
]);

/** Stripe's minimum charge for a few currencies, in the smallest unit (docs: "Minimum and maximum charge amounts"). */
const MINIMUM_AMOUNT: Record<string, number> = {
  usd: 50,
  eur: 50,
  gbp: 30,
  cad: 50,
  aud: 50,
  chf: 50,
  jpy: 50,
};
const MAXIMUM_AMOUNT = 99_999_999;
const MAX_LINE_ITEMS = 100;
const MIN_SESSION_S = 30 * 60;
const MAX_SESSION_S = 24 * 60 * 60;

function createCheckoutSession(store: StandinStore, call: ApiCall): unknown {
  const { params } = call;
  for (const key of Object.keys(params)) {
    if (SESSION_PARAMS_NOT_MODELLED.has(key)) throw notModelled(key);
  }
  rejectUnknown(params, SESSION_PARAMS);
  const mode = optionalEnum(params, "mode", ["payment", "setup", "subscription"]);
  if (mode === undefined) throw missingParam("mode");
  if (mode === "subscription") throw notModelled("mode", `mode=${mode}`);
  const uiMode = optionalEnum(params, "ui_mode", ["hosted", "embedded", "custom"]);
  if (uiMode !== undefined && uiMode !== "hosted")
    throw notModelled("ui_mode", `ui_mode=${uiMode}`);
  const setup = mode === "setup";
  for (const key of setup ? PAYMENT_MODE_ONLY : SETUP_MODE_ONLY) {
    if (params[key] !== undefined) {
      throw invalidRequest(`You can not pass \`${key}\` in \`${mode}\` mode.`, { param: key });
    }
  }
  // Payment mode takes its currency from the line items; Stripe's `currency` there is for
  // prices in several currencies, which the stand-in lacks.
  if (!setup && params.currency !== undefined) throw notModelled("currency");

  const lineItems = setup ? [] : parseLineItems(params);
  if (!setup) checkTotal(lineItems);
  const currency = setup ? currencyParam(params, "currency") : null;

  const customer = optionalString(params, "customer");
  const customerEmail = optionalString(params, "customer_email");
  if (customer !== undefined && customerEmail !== undefined) {
    throw invalidRequest(
      "You may only specify one of these parameters: customer, customer_email.",
      {
        code: "parameters_exclusive",
      },
    );
  }
  if (customer !== undefined && store.customer(customer) === undefined) {
    throw noSuch("customer", customer, { param: "customer", status: 400 });
  }
  if (customerEmail !== undefined) checkEmail(customerEmail, "customer_email");
  const customerCreation = optionalEnum(params, "customer_creation", ["if_required", "always"]);
  if (customerCreation !== undefined && customer !== undefined) {
    throw invalidRequest(
      "You may only specify one of these parameters: customer, customer_creation.",
      { code: "parameters_exclusive" },
    );
  }

  const clientReferenceId = optionalString(params, "client_reference_id");
  if (clientReferenceId !== undefined && clientReferenceId.length > 200) {
    throw invalidRequest("client_reference_id must be at most 200 characters.", {
      param: "client_reference_id",
    });
  }

  const now = store.nowSeconds();
  const expiresAt = optionalInteger(params, "expires_at");
  if (expiresAt !== undefined) {
    if (expiresAt < now + MIN_SESSION_S) {
      throw invalidRequest(
        "The `expires_at` timestamp must be at least 30 minutes from Checkout Session creation.",
        { param: "expires_at" },
      );
    }
    if (expiresAt > now + MAX_SESSION_S) {
      throw invalidRequest(
        "The `expires_at` timestamp must be less than 24 hours from Checkout Session creation.",
        { param: "expires_at" },
      );
    }
  }

  const intentData = optionalObject(params, "payment_intent_data") ?? {};
  rejectUnknown(intentData, PAYMENT_INTENT_DATA_PARAMS, "payment_intent_data");
  const receiptEmail = optionalString(intentData, "receipt_email", "payment_intent_data");
  if (receiptEmail !== undefined) checkEmail(receiptEmail, "payment_intent_data[receipt_email]");

  const methods = stringList(params, "payment_method_types") ?? ["card"];

  const setupData = optionalObject(params, "setup_intent_data") ?? {};
  rejectUnknown(setupData, SETUP_INTENT_DATA_PARAMS, "setup_intent_data");

  const session = store.createCheckoutSession({
    mode,
    lineItems,
    currency,
    successUrl: urlParam(params, "success_url"),
    cancelUrl: urlParam(params, "cancel_url"),
    clientReferenceId: clientReferenceId ?? null,
    metadata: metadataParam(params, "metadata"),
    customer: customer ?? null,
    customerEmail: customerEmail ?? null,
    customerCreation: customerCreation ?? null,
    paymentIntentData: {
      metadata: metadataParam(intentData, "metadata", "payment_intent_data"),
      description: optionalString(intentData, "description", "payment_intent_data") ?? null,
      receiptEmail: receiptEmail ?? null,
    },
    setupIntentData: {
      metadata: metadataParam(setupData, "metadata", "setup_intent_data"),
      description: optionalString(setupData, "description", "setup_intent_data") ?? null,
    },
    expiresAt: expiresAt ?? null,
    locale: optionalString(params, "locale") ?? null,
    submitType:
      optionalEnum(params, "submit_type", ["auto", "book", "donate", "pay", "subscribe"]) ?? null,
    paymentMethodTypes: methods,
  });
  return expand(store, session, expandPaths(params));
}

/** Stripe's minimum and maximum for a payment-mode session's total. */
function checkTotal(lineItems: readonly NewLineItem[]): void {
  const currency = lineItems[0]?.currency ?? "usd";
  const total = lineItems.reduce((sum, item) => sum + item.unitAmount * item.quantity, 0);
  const minimum = MINIMUM_AMOUNT[currency] ?? 1;
  if (total < minimum) {
    throw invalidRequest(
      `The Checkout Session's total amount due must add up to at least ${formatAmount(minimum, currency)} ${currency}`,
      { param: "line_items" },
    );
  }
  if (total > MAXIMUM_AMOUNT) {
    throw invalidRequest(
      `The Checkout Session's total amount due must be no more than ${formatAmount(MAXIMUM_AMOUNT, currency)} ${currency}`,
      { param: "line_items" },
    );
  }
}

/** An optional ISO currency code; Stripe takes it in any case and answers it lowercase. */
function currencyParam(params: FormObject, key: string, parent = ""): string | null {
  const raw = optionalString(params, key, parent);
  if (raw === undefined) return null;
  const currency = raw.toLowerCase();
  if (!/^[a-z]{3}$/.test(currency) || !isCurrency(currency)) {
    throw invalidRequest(`Invalid currency: ${currency}.`, { param: paramPath(parent, key) });
  }
  return currency;
}

function parseLineItems(params: FormObject): NewLineItem[] {
  const raw = optionalArray(params, "line_items");
  if (raw === undefined || raw.length === 0) throw missingParam("line_items");
  if (raw.length > MAX_LINE_ITEMS) {
    throw invalidRequest(`You may only specify up to ${MAX_LINE_ITEMS} line items.`, {
      param: "line_items",
    });
  }
  const items = raw.map((value, index) => parseLineItem(value, paramPath("line_items", index)));
  const currency = items[0]?.currency;
  const other = items.findIndex((item) => item.currency !== currency);
  if (other >= 0) {
    throw invalidRequest("Checkout does not support multiple currencies.", {
      param: paramPath(paramPath(paramPath("line_items", other), "price_data"), "currency"),
    });
  }
  return items;
}

function parseLineItem(value: FormValue, at: string): NewLineItem {
  if (typeof value !== "object" || Array.isArray(value)) {
    throw invalidRequest(`Invalid object: ${at} must be a hash.`, { param: at });
  }
  rejectUnknown(value, LINE_ITEM_PARAMS, at);
  const price = optionalString(value, "price", at);
  if (price !== undefined) {
    // The stand-in keeps no Price catalogue: every id is unknown, as an unknown id is on Stripe.
    throw noSuch("price", price, { param: paramPath(at, "price"), status: 400 });
  }
  const priceAt = paramPath(at, "price_data");
  const priceData = optionalObject(value, "price_data", at);
  if (priceData === undefined) {
    throw invalidRequest(`You must specify either \`price\` or \`price_data\` in ${at}.`, {
      code: "parameter_missing",
      param: priceAt,
    });
  }
  rejectUnknown(priceData, PRICE_DATA_PARAMS, priceAt);
  if (priceData.recurring !== undefined) {
    throw invalidRequest(
      "You must be in `subscription` mode to use recurring prices; this session is in `payment` mode.",
      { param: paramPath(priceAt, "recurring") },
    );
  }
  const currency = requiredString(priceData, "currency", priceAt).toLowerCase();
  if (!/^[a-z]{3}$/.test(currency) || !isCurrency(currency)) {
    throw invalidRequest(`Invalid currency: ${currency}.`, {
      param: paramPath(priceAt, "currency"),
    });
  }
  const unitAmount = unitAmountOf(priceData, priceAt);
  const product = optionalString(priceData, "product", priceAt);
  if (product !== undefined) {
    throw noSuch("product", product, { param: paramPath(priceAt, "product"), status: 400 });
  }
  const productAt = paramPath(priceAt, "product_data");
  const productData = optionalObject(priceData, "product_data", priceAt);
  if (productData === undefined) throw missingParam(productAt);
  rejectUnknown(productData, PRODUCT_DATA_PARAMS, productAt);
  const name = requiredString(productData, "name", productAt);
  metadataParam(productData, "metadata", productAt);
  const quantity = requiredInteger(value, "quantity", at, 1);
  return {
    name,
    description: optionalString(productData, "description", productAt) ?? null,
    currency,
    unitAmount,
    quantity,
  };
}

function unitAmountOf(priceData: FormObject, priceAt: string): number {
  const unitAmount = optionalInteger(priceData, "unit_amount", priceAt);
  const decimal = optionalString(priceData, "unit_amount_decimal", priceAt);
  if (unitAmount !== undefined && decimal !== undefined) {
    throw invalidRequest(
      "You may only specify one of these parameters: unit_amount, unit_amount_decimal.",
      { code: "parameters_exclusive", param: paramPath(priceAt, "unit_amount_decimal") },
    );
  }
  if (unitAmount !== undefined) return unitAmount;
  if (decimal !== undefined) {
    // Fractions of the smallest unit are legal on Stripe; the stand-in keeps amounts exact only.
    if (!/^\d+(\.0*)?$/.test(decimal)) {
      throw notModelled(
        paramPath(priceAt, "unit_amount_decimal"),
        "a unit_amount_decimal with a fraction",
      );
    }
    return Number.parseInt(decimal, 10);
  }
  throw missingParam(paramPath(priceAt, "unit_amount"));
}

/** ISO 4217 codes in use, as Intl knows them (any 3 letters format, so "zzz" must be refused here). */
const CURRENCIES = new Set(Intl.supportedValuesOf("currency").map((c) => c.toLowerCase()));

function isCurrency(code: string): boolean {
  return CURRENCIES.has(code) && currencyDigits(code) >= 0;
}

function urlParam(params: FormObject, key: string): string | null {
  const value = optionalString(params, key);
  if (value === undefined) return null;
  let parsed: URL;
  try {
    // Stripe's template variable is not valid in every URL position: check the URL without it.
    parsed = new URL(value.replaceAll("{CHECKOUT_SESSION_ID}", "cs"));
  } catch {
    throw invalidRequest(`Not a valid URL`, { param: key, code: "url_invalid" });
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw invalidRequest(`Not a valid URL`, { param: key, code: "url_invalid" });
  }
  return value;
}

function checkEmail(value: string, param: string): void {
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) {
    throw invalidRequest(`Invalid email address: ${value}`, { code: "email_invalid", param });
  }
}

function notModelled(param: string, what = `\`${param}\``): StripeApiError {
  return invalidRequest(
    `The Stripe stand-in does not model ${what}; see packages/stripe-standin/README.md.`,
    { param },
  );
}

const PAYMENT_INTENT_PARAMS = new Set([
  "amount",
  "currency",
  "customer",
  "payment_method",
  "off_session",
  "confirm",
  "metadata",
  "description",
  "receipt_email",
  "statement_descriptor_suffix",
  "payment_method_types",
  "expand",
]);

/**
 * `POST /v1/payment_intents`, only as Parley uses it: a saved card charged with the customer
 * absent (`confirm=true`, `off_session=true`). An on-session or unconfirmed intent would need
 * client-side confirmation, which the stand-in has no page for.
 */
function createPaymentIntent(store: StandinStore, call: ApiCall): unknown {
  const { params } = call;
  rejectUnknown(params, PAYMENT_INTENT_PARAMS);
  if (booleanParam(params, "confirm") !== true) {
    throw notModelled("confirm", "a PaymentIntent without `confirm=true`");
  }
  const offSession = optionalString(params, "off_session");
  // Stripe's `off_session` is a boolean or the kind of off-session use, `one_off` or `recurring`.
  if (offSession !== "true" && offSession !== "one_off" && offSession !== "recurring") {
    if (offSession !== undefined && offSession !== "false") booleanParam(params, "off_session");
    throw notModelled("off_session", "an on-session PaymentIntent (without `off_session=true`)");
  }
  const amount = requiredInteger(params, "amount", "", 1);
  const currency = currencyParam(params, "currency");
  if (currency === null) throw missingParam("currency");
  const minimum = MINIMUM_AMOUNT[currency] ?? 1;
  if (amount < minimum) {
    throw invalidRequest(`Amount must be at least ${formatAmount(minimum, currency)} ${currency}`, {
      code: "amount_too_small",
      param: "amount",
    });
  }
  if (amount > MAXIMUM_AMOUNT) {
    throw invalidRequest(`Amount must be no more than ${formatAmount(MAXIMUM_AMOUNT, currency)}`, {
      code: "amount_too_large",
      param: "amount",
    });
  }
  const customer = requiredString(params, "customer");
  const paymentMethod = requiredString(params, "payment_method");
  const receiptEmail = optionalString(params, "receipt_email");
  if (receiptEmail !== undefined) checkEmail(receiptEmail, "receipt_email");
  const suffix = optionalString(params, "statement_descriptor_suffix");
  if (suffix !== undefined && suffix.length > 22) {
    throw invalidRequest("The statement descriptor suffix must be at most 22 characters long.", {
      param: "statement_descriptor_suffix",
    });
  }
  const paths = expandPaths(params);
  const intent = store.chargeOffSession(
    {
      amount,
      currency,
      customer,
      paymentMethod,
      metadata: metadataParam(params, "metadata"),
      description: optionalString(params, "description") ?? null,
      receiptEmail: receiptEmail ?? null,
      statementDescriptorSuffix: suffix ?? null,
      paymentMethodTypes: stringList(params, "payment_method_types") ?? ["card"],
    },
    call.request,
  );
  return expand(store, intent, paths);
}

function booleanParam(params: FormObject, key: string): boolean | undefined {
  const value = optionalString(params, key);
  if (value === undefined) return undefined;
  if (value !== "true" && value !== "false") {
    throw invalidRequest(`Invalid boolean: ${value}`, { param: key });
  }
  return value === "true";
}

function stringList(params: FormObject, key: string): string[] | undefined {
  return optionalArray(params, key)?.map((value, i) => {
    if (typeof value !== "string" || value === "") {
      throw invalidRequest("Invalid string.", { param: paramPath(key, i) });
    }
    return value;
  });
}

const REFUND_REASONS = ["duplicate", "fraudulent", "requested_by_customer"] as const;

const REFUND_PARAMS = new Set([
  "charge",
  "payment_intent",
  "amount",
  "reason",
  "metadata",
  "expand",
  "instructions_email",
]);

function createRefund(store: StandinStore, call: ApiCall): unknown {
  const { params } = call;
  rejectUnknown(params, REFUND_PARAMS);
  const refund = store.createRefund(
    {
      charge: optionalString(params, "charge") ?? null,
      paymentIntent: optionalString(params, "payment_intent") ?? null,
      amount: optionalInteger(params, "amount", "", 1) ?? null,
      reason: optionalEnum(params, "reason", REFUND_REASONS) ?? null,
      metadata: metadataParam(params, "metadata"),
    },
    call.request,
  );
  return expand(store, refund, expandPaths(params));
}

const PORTAL_PARAMS = new Set([
  "customer",
  "return_url",
  "locale",
  "configuration",
  "on_behalf_of",
  "expand",
]);

function createPortalSession(store: StandinStore, call: ApiCall): unknown {
  const { params } = call;
  if (params.flow_data !== undefined) throw notModelled("flow_data");
  rejectUnknown(params, PORTAL_PARAMS);
  const portal = store.createPortalSession(
    {
      customer: requiredString(params, "customer"),
      returnUrl: urlParam(params, "return_url"),
      locale: optionalString(params, "locale") ?? null,
    },
    call.request,
  );
  return expand(store, portal, expandPaths(params));
}
