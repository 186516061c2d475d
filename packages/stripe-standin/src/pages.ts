/**
 * The stand-in's HTML: the hosted pay page Checkout's `url` points at, the billing portal and a
 * receipt. Plain, accessible markup with stable ids (`#pay`, `#cancel`, ...) for browser tests;
 * no script, so every action is a form post or a link.
 */
import type {
  BillingPortalSession,
  Charge,
  CheckoutSession,
  Customer,
  LineItem,
} from "./objects.ts";
import { formatAmount } from "./store.ts";

export function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

const STYLE = `
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f6f8fa; color: #1a1f36; }
main { max-width: 32rem; margin: 2rem auto; padding: 1.5rem 2rem; background: #fff; border-radius: 8px; box-shadow: 0 1px 3px #0002; }
.test-mode { background: #ffde92; color: #4a3200; padding: .25rem .75rem; border-radius: 4px; display: inline-block; font-size: .875rem; }
table { width: 100%; border-collapse: collapse; margin: 1rem 0; }
th, td { text-align: left; padding: .375rem .25rem; border-bottom: 1px solid #e3e8ee; }
td.amount, th.amount { text-align: right; }
label { display: block; margin-top: 1rem; font-weight: 600; }
input { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; }
button { font: inherit; padding: .625rem 1rem; border-radius: 6px; border: 1px solid #635bff; background: #fff; color: #635bff; cursor: pointer; margin: .25rem .25rem .25rem 0; }
button#pay { background: #635bff; color: #fff; width: 100%; margin-top: 1rem; }
fieldset { margin-top: 1rem; border: 1px solid #e3e8ee; border-radius: 6px; }
[role=alert] { background: #fde8e8; color: #8a1c1c; padding: .5rem .75rem; border-radius: 4px; }
`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<p class="test-mode">Test mode: Stripe stand-in, no real money moves</p>
${body}
</main>
</body>
</html>
`;
}

function lineItemRows(items: readonly LineItem[]): string {
  return items
    .map(
      (item) =>
        `<tr><td>${escapeHtml(item.description)}</td><td>${item.quantity}</td><td class="amount">${escapeHtml(formatAmount(item.amount_total, item.currency))}</td></tr>`,
    )
    .join("\n");
}

/**
 * The email the page starts with, as Stripe Checkout fills it: what the payer gave before, else
 * the session's `customer_email`, else the email of the Customer the session names (Stripe takes
 * only one of `customer` and `customer_email`). With none, a test address, so a test can pay at
 * once (Stripe would leave the field empty for the payer).
 */
function prefilledEmail(session: CheckoutSession, customerEmail: string | null | undefined) {
  return (
    session.customer_details?.email ??
    session.customer_email ??
    customerEmail ??
    "customer@example.com"
  );
}

/** The open session's pay page. `error` is shown after a declined attempt. */
export function payPage(
  session: CheckoutSession,
  items: readonly LineItem[],
  options: { error?: string; card?: string; customerEmail?: string | null } = {},
): string {
  if (session.mode === "setup") return setupPage(session, options);
  const total = formatAmount(session.amount_total ?? 0, session.currency ?? "usd");
  const email = prefilledEmail(session, options.customerEmail);
  // Relative to /pay/<id>, so the page also works behind a proxy that mounts it elsewhere.
  const action = encodeURIComponent(session.id);
  return page(
    `Pay ${total}`,
    `<h1>Pay <span id="amount">${escapeHtml(total)}</span></h1>
${options.error === undefined ? "" : `<p id="error" role="alert">${escapeHtml(options.error)}</p>`}
<table>
<caption>Order summary</caption>
<thead><tr><th scope="col">Item</th><th scope="col">Qty</th><th scope="col" class="amount">Amount</th></tr></thead>
<tbody>
${lineItemRows(items)}
</tbody>
<tfoot><tr><th scope="row" colspan="2">Total</th><td class="amount">${escapeHtml(total)}</td></tr></tfoot>
</table>
<form method="post" action="${escapeHtml(action)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" required value="${escapeHtml(email)}">
<button id="pay" type="submit" name="outcome" value="succeed">Pay</button>
<fieldset>
<legend>Other test outcomes</legend>
<button id="decline" type="submit" name="outcome" value="decline">Decline card</button>
<button id="pay-async" type="submit" name="outcome" value="async-succeed">Bank debit that succeeds later</button>
<button id="pay-async-fail" type="submit" name="outcome" value="async-fail">Bank debit that fails later</button>
</fieldset>
</form>
${session.cancel_url === null ? "" : `<p><a id="cancel" href="${escapeHtml(`${action}/cancel`)}">Cancel</a></p>`}`,
  );
}

/**
 * A setup-mode session's page: nothing is charged, the customer saves a card. The card number
 * picks Stripe's test-card behaviour for later charges (README, "Test cards"). `card` refills the
 * field after an error.
 */
function setupPage(
  session: CheckoutSession,
  options: { error?: string; card?: string; customerEmail?: string | null },
): string {
  const email = prefilledEmail(session, options.customerEmail);
  const action = encodeURIComponent(session.id);
  return page(
    "Save a card",
    `<h1>Save a card for later payments</h1>
${options.error === undefined ? "" : `<p id="error" role="alert">${escapeHtml(options.error)}</p>`}
<p>Nothing is charged now.</p>
<form method="post" action="${escapeHtml(action)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" required value="${escapeHtml(email)}">
<label for="card">Card number</label>
<input id="card" name="card" type="text" inputmode="numeric" autocomplete="cc-number" required value="${escapeHtml(options.card ?? "4242 4242 4242 4242")}">
<button id="pay" type="submit">Save card</button>
</form>
${session.cancel_url === null ? "" : `<p><a id="cancel" href="${escapeHtml(`${action}/cancel`)}">Cancel</a></p>`}`,
  );
}

/**
 * What a complete or expired session shows instead of the form: it cannot be paid again.
 * `paymentFailed`: a delayed payment of the complete session failed.
 */
export function closedPage(session: CheckoutSession, paymentFailed = false): string {
  if (session.status === "expired") {
    return page(
      "Checkout session expired",
      `<h1 id="status">This checkout session has expired</h1>
<p>Nothing was charged. Start again from the site you came from.</p>`,
    );
  }
  if (session.mode === "setup") {
    return page(
      "Card saved",
      `<h1 id="status">Card saved</h1>
<p>This checkout session is complete: the card is saved. It cannot be submitted twice.</p>
${session.success_url === null ? "" : `<p><a id="continue" href="${escapeHtml(successUrl(session))}">Continue</a></p>`}`,
    );
  }
  const paid = session.payment_status === "paid";
  if (!paid && paymentFailed) {
    return page(
      "Payment failed",
      `<h1 id="status">Payment failed</h1>
<p>The payment for this checkout session failed. Start again from the site you came from.</p>`,
    );
  }
  return page(
    paid ? "Payment complete" : "Payment processing",
    `<h1 id="status">${paid ? "Payment complete" : "Payment processing"}</h1>
<p>${
      paid
        ? `This checkout session is already paid (${escapeHtml(formatAmount(session.amount_total ?? 0, session.currency ?? "usd"))}). It cannot be paid twice.`
        : "This checkout session is complete; the payment is still being processed."
    }</p>
${session.success_url === null ? "" : `<p><a id="continue" href="${escapeHtml(successUrl(session))}">Continue</a></p>`}`,
  );
}

/** `success_url` with Stripe's `{CHECKOUT_SESSION_ID}` template variable filled in. */
export function successUrl(session: CheckoutSession): string {
  return (session.success_url ?? "").replaceAll("{CHECKOUT_SESSION_ID}", session.id);
}

/** A page that only says something: not found, bad request. */
export function messagePage(title: string, text: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>`);
}

/** The billing portal: the customer's payments with their receipts. */
export function portalPage(
  portal: BillingPortalSession,
  customer: Customer,
  charges: readonly Charge[],
): string {
  const rows = charges
    .map((charge) => {
      const date = new Date(charge.created * 1000).toISOString().slice(0, 10);
      const refunded =
        charge.amount_refunded > 0
          ? ` (refunded ${escapeHtml(formatAmount(charge.amount_refunded, charge.currency))})`
          : "";
      return `<tr><td>${date}</td><td>${escapeHtml(charge.description ?? "Payment")}</td><td class="amount">${escapeHtml(formatAmount(charge.amount, charge.currency))}${refunded}</td><td>${escapeHtml(charge.status)}</td><td><a href="${escapeHtml(charge.receipt_url)}">Receipt</a></td></tr>`;
    })
    .join("\n");
  return page(
    "Billing",
    `<h1>Billing</h1>
<p>${escapeHtml(customer.name ?? customer.email ?? customer.id)}</p>
<table id="payments">
<caption>Payment history</caption>
<thead><tr><th scope="col">Date</th><th scope="col">Description</th><th scope="col" class="amount">Amount</th><th scope="col">Status</th><th scope="col">Receipt</th></tr></thead>
<tbody>
${rows === "" ? '<tr><td colspan="5">No payments yet.</td></tr>' : rows}
</tbody>
</table>
${portal.return_url === null ? "" : `<p><a id="return" href="${escapeHtml(portal.return_url)}">Return</a></p>`}`,
  );
}

export function receiptPage(charge: Charge): string {
  const amount = formatAmount(charge.amount, charge.currency);
  const date = new Date(charge.created * 1000).toISOString().slice(0, 10);
  return page(
    `Receipt ${charge.id}`,
    `<h1>Receipt</h1>
<dl>
<dt>Amount paid</dt><dd id="receipt-amount">${escapeHtml(amount)}</dd>
<dt>Date</dt><dd>${date}</dd>
<dt>Payment</dt><dd>${escapeHtml(charge.id)}</dd>
<dt>Status</dt><dd>${escapeHtml(charge.status)}</dd>
${charge.amount_refunded > 0 ? `<dt>Refunded</dt><dd>${escapeHtml(formatAmount(charge.amount_refunded, charge.currency))}</dd>` : ""}
</dl>`,
  );
}
