import { mkdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { devReply } from "@parley/dev-model/reply";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type DevStack, startDevStack } from "../../../scripts/lib/dev-stack.mjs";
import {
  clickAndAwaitApi,
  countReplyEnds,
  launchChromium,
  repliesEnded,
  verifyEmailFromMailbox,
} from "./browser.ts";

/**
 * The web app in a real browser (Debian's chromium through playwright-core) against the whole
 * platform started the way `pnpm dev` starts it (scripts/dev.mjs: web build, migrations, wrangler
 * dev, dev model, Stripe stand-in), with its state in a temporary directory. Each step leaves a
 * screenshot in screenshots/.
 */
const screenshots = path.resolve(import.meta.dirname, "../screenshots");
const UI_TIMEOUT = 30_000;

/** "$24.99" or "$4.9998" -> micro-dollars; the balance shows sub-cent digits when it has them. */
function micros(text: string): number {
  const match = /^\$([\d,]+)(?:\.(\d{1,6}))?$/.exec(text.trim());
  if (!match) throw new Error(`not a dollar amount: ${JSON.stringify(text)}`);
  const whole = Number((match[1] ?? "").replaceAll(",", ""));
  return whole * 1_000_000 + Number((match[2] ?? "").padEnd(6, "0"));
}

let stack: DevStack | undefined;
let base = "";
/** Everything the stack printed so far. */
const log = () => stack?.log() ?? "";
let browser: Browser | undefined;
let page: Page;
/** How many chat replies the page has seen end (browser.ts `countReplyEnds`). */
let replyEnds: () => number = () => 0;
/** Every WebSocket URL the page opened: each carries a connect ticket, none a bearer token. */
const socketUrls: string[] = [];
/** What the browser refused under the app's Content-Security-Policy: nothing, on every screen. */
const cspViolations: string[] = [];
const pageTrouble: string[] = [];
let shot = 0;

async function screenshot(name: string): Promise<void> {
  shot += 1;
  await page.screenshot({ path: path.join(screenshots, `${shot}-${name}.png`), type: "png" });
}

/**
 * The whole balance on the billing page, exact: what is available ("Exactly $4.99988 available."
 * behind "Exact amount" when cents hide digits) plus what chats in progress hold (an active chat
 * keeps a little set aside).
 */
async function wholeBalance(): Promise<number> {
  const hero = page.getByRole("region", { name: "Available balance" });
  await hero.getByTestId("balance").waitFor();
  const exact = hero.getByText(/^Exactly \$/);
  const text =
    (await exact.count()) > 0
      ? ((await exact.textContent()) ?? "").replace(/^Exactly /, "").replace(/ available\.$/, "")
      : ((await hero.getByTestId("balance").textContent()) ?? "");
  const held = hero.getByText(/ held by chats in progress/);
  const heldText =
    (await held.count()) > 0 ? ((await held.textContent()) ?? "").split(" ")[0] : "$0";
  return micros(text) + micros(heldText ?? "$0");
}

const mainNav = () => page.getByRole("navigation", { name: "Main" });
const composerOf = (chat: Locator) => chat.getByRole("textbox", { name: "Message" });
const repliesOf = (chat: Locator) =>
  chat.getByRole("listitem").filter({ has: page.getByText("Assistant said:") });
/** The price under a reply ("Cost $0.000116 · 512 tokens" -> "$0.000116"). */
async function costOf(reply: Locator): Promise<string> {
  const figures = reply.getByText(/^Cost \$\d/);
  await figures.waitFor();
  return /Cost (\$[\d.,]+)/.exec((await figures.textContent()) ?? "")?.[1] ?? "";
}

/** What the session's header says the chat on screen has cost so far ("$0.000116"). */
async function spentSoFar(): Promise<string> {
  const text =
    (await page
      .locator("p")
      .filter({ hasText: /Spent so far/ })
      .textContent()) ?? "";
  return /(\$[\d.,]+)$/.exec(text.trim())?.[1] ?? text;
}

/** Saves the billing page's "Limits and alerts" form and waits until the API has saved it. */
async function saveLimits(form: Locator): Promise<void> {
  await clickAndAwaitApi(
    page,
    form.getByRole("button", { name: "Save settings" }),
    "PATCH",
    /\/billing\/settings$/,
  );
  expect(await form.getByRole("alert").count()).toBe(0);
}

beforeAll(async () => {
  await mkdir(screenshots, { recursive: true });
  const starting = startDevStack({ timeoutMs: 150_000 });
  const launching = launchChromium();
  stack = await starting;
  base = stack.base;
  browser = await launching;
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(UI_TIMEOUT);
  page = await context.newPage();
  replyEnds = countReplyEnds(page);
  page.on("websocket", (ws) => socketUrls.push(ws.url()));
  page.on("console", (message) => {
    if (/Content.Security.Policy|Refused to/i.test(message.text()))
      cspViolations.push(message.text());
    if (message.type() === "error") pageTrouble.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => pageTrouble.push(`page error: ${String(error)}`));
  page.on("response", (response) => {
    if (response.status() >= 400)
      pageTrouble.push(`${response.status()} ${response.request().method()} ${response.url()}`);
  });
}, 180_000);

// Cleared before each step, printed when it fails: what the page saw go wrong while it ran.
beforeEach(() => {
  pageTrouble.length = 0;
});

// A failed step leaves a picture of the page outside the commit-worthy screenshots.
afterEach(async (context) => {
  if (context.task.result?.state !== "fail" || !browser) return;
  const file = path.join(tmpdir(), `parley-e2e-failure-${Date.now()}.png`);
  await page.screenshot({ path: file, type: "png" }).catch(() => undefined);
  console.log(`[e2e] ${context.task.name} failed at ${page.url()}; page saved to ${file}`);
  for (const line of pageTrouble.slice(-20)) console.log(`[e2e]   ${line}`);
});

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await stack?.stop();
});

describe("the web app in Chromium", () => {
  // Fixed, so the screenshots stay the same from run to run: every run starts from empty state.
  const email = "ada@example.com";
  const previewText = "What should our launch plan cover first";
  const sessionText = "Draft three headline ideas for the launch";
  const sessionTitle = sessionText;
  const projectName = "Launch plan";
  let sessionId = "";
  let balanceBeforeTopUp = 0;
  /** The price under the assistant's reply, as displayed ("$0.000116"). */
  let turnCost = "";

  it("signs up", async () => {
    await page.goto(`${base}/signup`);
    await page.getByRole("heading", { name: "Create your account" }).waitFor();
    await page.getByLabel("Name", { exact: true }).fill("Ada Lovelace");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("correct horse battery");
    await page.getByLabel("Organization name (optional)").fill("Analytical Engines");
    await screenshot("sign-up");
    await page.getByRole("button", { name: "Sign up" }).click();
    await page.getByRole("heading", { name: "Projects in Analytical Engines" }).waitFor();
    await page.getByText("No projects yet.").waitFor();
    expect(new URL(page.url()).pathname).toBe("/projects");
    await screenshot("projects-empty");
  });

  it("confirms the address from the development mailbox, which brings the sign-up grant", async () => {
    // The banner says what waits for the confirmation.
    await page.getByRole("region", { name: "Confirm your email address" }).waitFor();
    await verifyEmailFromMailbox(page, stack?.mailbox ?? "", email);
    await page.getByRole("link", { name: "Go to your projects" }).click();
    await page.getByRole("heading", { name: "Projects in Analytical Engines" }).waitFor();
    await expect
      .poll(() => page.getByRole("region", { name: "Confirm your email address" }).count())
      .toBe(0);
  });

  it("creates a project", async () => {
    const form = page.getByRole("form", { name: "New project" });
    await form.getByLabel("Name").fill(projectName);
    await form.getByRole("button", { name: "Create project" }).click();
    await page.getByRole("heading", { level: 1, name: projectName }).waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/projects\/[^/]+$/);
  });

  it("chats in the onboarding preview and sees the dev model's reply", async () => {
    const chat = page.getByRole("region", { name: "Onboarding preview chat" });
    await chat.getByText("Try the assistant for free").waitFor();
    await composerOf(chat).fill(previewText);
    await chat.getByRole("button", { name: "Send" }).click();
    const reply = repliesOf(chat).last();
    await expect.poll(() => reply.textContent()).toContain(devReply(previewText));
    // The reply's metadata says how many free turns are left.
    await chat.getByText(/\d+ free turns? left/).waitFor();
    await chat.getByRole("button", { name: "Send" }).waitFor();
    await screenshot("onboarding-preview");
  });

  it("opens a new chat and talks in it; the reply shows what it cost", async () => {
    await page.getByRole("button", { name: "New chat" }).click();
    await page.waitForURL(/\/sessions\/[^/]+$/);
    sessionId = decodeURIComponent(new URL(page.url()).pathname.split("/")[2] ?? "");
    expect(sessionId).toMatch(/^ses_/);
    const chat = page.getByRole("region", { name: "Assistant chat" });
    await chat.getByText("How can I help?").waitFor();
    await composerOf(chat).fill(sessionText);
    await chat.getByRole("button", { name: "Send" }).click();
    const reply = repliesOf(chat).last();
    await expect.poll(() => reply.textContent()).toContain(devReply(sessionText));
    turnCost = await costOf(reply);
    expect(turnCost).toMatch(/^\$\d/);
    await chat.getByRole("button", { name: "Send" }).waitFor();
    await page.getByRole("heading", { level: 1, name: sessionTitle }).waitFor();
    await screenshot("assistant-session");
  });

  it("tops up $20 through the Stripe stand-in's Checkout page and sees the balance rise", async () => {
    // A chat reports its calls to the org's account when a read of usage or balance asks, and a
    // read waits for that at most 2 s: on a loaded machine the billing page's one read can come
    // before the reply's calls are in, and the balance it shows misses them for good (the page
    // reads it once). The session's spend, read afresh each time (a reload), says when the
    // account has the reply's cost; every read after that has it.
    await expect
      .poll(
        async () => {
          await page.reload();
          await page.getByRole("heading", { level: 1, name: sessionTitle }).waitFor();
          return spentSoFar();
        },
        { timeout: UI_TIMEOUT * 2, interval: 1_000 },
      )
      .toBe(turnCost);
    await mainNav().getByRole("link", { name: "Billing" }).click();
    await page.getByRole("heading", { level: 1, name: /^Billing/ }).waitFor();
    // What is available and what the chat just used still holds make the whole balance.
    balanceBeforeTopUp = await wholeBalance();
    // The $5.00 sign-up grant minus what the assistant turn cost (the preview is free).
    expect(balanceBeforeTopUp).toBeLessThan(5_000_000);
    expect(balanceBeforeTopUp).toBeGreaterThan(4_000_000);
    await screenshot("billing-before-top-up");

    await page
      .getByRole("region", { name: "Available balance" })
      .getByRole("button", { name: "Top up" })
      .click();
    const topUp = page.getByRole("form", { name: "Top up credits" });
    // The minimum is said before anything is sent, not only as an API error.
    await topUp.getByText(/Minimum \$5\.00/).waitFor();
    await topUp.getByLabel("Amount in US dollars").fill("2");
    await topUp.getByRole("button", { name: "Top up" }).click();
    await topUp
      .getByText(/at least \$5|minimum/i)
      .first()
      .waitFor();
    expect(new URL(page.url()).origin).toBe(base);
    await topUp.getByLabel("Amount in US dollars").fill("20");
    await topUp.getByRole("button", { name: "Top up" }).click();
    // The app leaves for the stand-in's pay page, on the stand-in's own port.
    await page.waitForURL((url) => url.origin !== base);
    await page.locator("#pay").waitFor();
    await screenshot("stripe-checkout");
    await page.locator("#pay").click();
    await page.waitForURL((url) => url.origin === base && url.pathname === "/billing");
    await page.getByText("Payment received.").waitFor();
    // Said once: the return's parameter is gone from the address, so a reload does not repeat it.
    await expect.poll(() => new URL(page.url()).search).toBe("");
    // The signed webhook credits the org shortly after the redirect: the page polls until it shows.
    await expect
      .poll(() => wholeBalance(), { timeout: UI_TIMEOUT, interval: 500 })
      .toBe(balanceBeforeTopUp + 20_000_000);
    await screenshot("billing-after-top-up");
    await page.reload();
    await page.getByRole("region", { name: "Available balance" }).getByTestId("balance").waitFor();
    expect(await page.getByText("Payment received.").count()).toBe(0);
  });

  it("names the session in the spend breakdown, never its raw id", async () => {
    const usage = page.getByRole("region", { name: /^Spend, / });
    await usage.getByLabel("Group by").selectOption("session");
    const row = usage.getByRole("row").filter({ hasText: sessionTitle });
    await expect.poll(() => row.textContent()).toContain(turnCost);
    expect(await usage.textContent()).not.toMatch(/\b(ses|usr|prj)_[0-9a-z]{6,}/);
    await usage.scrollIntoViewIfNeeded();
    await screenshot("billing-usage");
  });

  it("lists every entry of the ledger with an exact balance after it", async () => {
    await page.getByRole("tab", { name: "Ledger" }).click();
    const table = page.getByRole("table", { name: "Ledger entries, newest first" });
    await table.waitFor();
    const text = (await table.textContent()) ?? "";
    // The grant, the usage of the turn and the top-up: three balances, none rounded into another.
    const balances = new Set(text.match(/\$\d+\.\d{2,6}/g) ?? []);
    expect(balances.size).toBeGreaterThanOrEqual(3);
    expect(text).not.toMatch(/\b(ses|usr|prj)_[0-9a-z]{6,}/);
  });

  it("lists the top-up with its receipt from Stripe, which opens", async () => {
    const payments = page.getByRole("table", { name: "Payments, newest first" });
    await payments.waitFor();
    const row = payments.getByRole("row").filter({ hasText: "$20.00" });
    await row.getByText("Paid").waitFor();
    const href = await row.getByRole("link", { name: /^Receipt/ }).getAttribute("href");
    const receipt = await page.request.get(href ?? "");
    expect(receipt.status()).toBe(200);
    expect(await receipt.text()).toContain("$20.00");
  });

  it("saves a card through the stand-in's setup page, and watches an automatic top-up arrive", async () => {
    await page.getByRole("tab", { name: "Settings" }).click();
    const card = page.getByRole("region", { name: "Automatic top-up" });
    await card.getByText("No card saved").waitFor();
    await card.getByRole("button", { name: "Save a card" }).click();
    await page.waitForURL((url) => url.origin !== base);
    await page.locator("#card").fill("4242 4242 4242 4242");
    await page.getByRole("button", { name: "Save card" }).click();
    await page.waitForURL((url) => url.origin === base && url.pathname === "/billing");
    await expect.poll(() => new URL(page.url()).search).toBe("");
    const saved = page.getByRole("region", { name: "Automatic top-up" });
    await saved.getByText(/ending 4242/).waitFor({ timeout: UI_TIMEOUT });

    // The balance (about $25) is already below a $30 threshold: turning it on charges $10 once.
    const before = balanceBeforeTopUp + 20_000_000;
    await saved.getByLabel("When the balance falls below (USD)").fill("30");
    await saved.getByLabel("Add (USD)").fill("10");
    await saved.getByLabel("At most per month (USD)").fill("50");
    await saved.getByRole("checkbox", { name: /Top up automatically/ }).check();
    await saved.getByRole("button", { name: "Save automatic top-up" }).click();
    const charges = saved.getByRole("listitem").filter({ hasText: "$10.00" });
    await charges.getByText("Paid").waitFor({ timeout: UI_TIMEOUT });
    expect(await charges.count()).toBe(1);
    await screenshot("billing-auto-top-up");
    await page.getByRole("tab", { name: "Overview" }).click();
    await expect
      .poll(() => wholeBalance(), { timeout: UI_TIMEOUT, interval: 500 })
      .toBeGreaterThan(before + 9_000_000);
    // Listed with the other payments, marked automatic, with Stripe's receipt.
    await page.getByRole("tab", { name: "Ledger" }).click();
    const payments = page.getByRole("table", { name: "Payments, newest first" });
    const row = payments.getByRole("row").filter({ hasText: "Automatic" });
    await row.getByText("$10.00").waitFor({ timeout: UI_TIMEOUT });
    expect(await row.getByRole("link", { name: /^Receipt/ }).count()).toBe(1);
  });

  it("downloads everything Parley holds about them as one JSON archive", async () => {
    await page.getByRole("button", { name: "Account menu" }).click();
    await page.getByRole("menuitem", { name: "Account" }).click();
    const card = page.getByRole("region", { name: "Download your data" });
    await card.getByRole("button", { name: "Download your data" }).click();
    const link = card.getByRole("link", { name: /^Download archive/ });
    await link.waitFor({ timeout: 60_000 });
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
    const archive = JSON.parse(await readFile((await download.path()) ?? "", "utf8"));
    expect(archive.format).toBe("parley.data-export");
    const text = JSON.stringify(archive);
    expect(text).toContain(email);
    // Their chat's transcript is in it, and no secret is.
    expect(text).toContain("Dev model reply to:");
    expect(text).not.toMatch(/password_hash|token_hash|prly_sk_/);
    await page.goto(`${base}/billing#ledger`);
  });

  it("takes a sub-cent spend limit, and a reply it stops offers to raise the limit, not a top-up", async () => {
    await page.getByRole("tab", { name: "Settings" }).click();
    const form = page.getByRole("form", { name: "Limits and alerts" });
    await form.getByLabel("Monthly limit for the organization (USD)").fill("0.005");
    // Saved before the reload: Chromium aborts a save still in flight when the page reloads.
    await saveLimits(form);
    await page.reload();
    await page.getByRole("tab", { name: "Settings" }).click();
    await expect
      .poll(() =>
        page
          .getByRole("form", { name: "Limits and alerts" })
          .getByLabel("Monthly limit for the organization (USD)")
          .inputValue(),
      )
      .toBe("0.005");

    // Below what the month has already spent: the next reply is stopped before the model runs.
    const settings = page.getByRole("form", { name: "Limits and alerts" });
    await settings.getByLabel("Monthly limit for the organization (USD)").fill("0.0001");
    await saveLimits(settings);
    await page.goto(`${base}/sessions/${sessionId}`);
    const chat = page.getByRole("region", { name: "Assistant chat" });
    await composerOf(chat).fill("One more idea, please");
    await chat.getByRole("button", { name: "Send" }).click();
    // Refused before it is stored (issue 28): one notice naming the limit, the message back in
    // the box, and a button to that very limit, not a top-up.
    const stopped = chat.getByTestId("limit-stop");
    await stopped.getByRole("link", { name: "Raise the monthly limit" }).waitFor();
    expect(await stopped.getByRole("link", { name: /top up/i }).count()).toBe(0);
    await expect.poll(() => composerOf(chat).inputValue()).toBe("One more idea, please");
    await composerOf(chat).fill("");
    // Lift the limit again for the rest of the run.
    await page.goto(`${base}/billing#settings`);
    const lift = page.getByRole("form", { name: "Limits and alerts" });
    await lift.getByLabel("Monthly limit for the organization (USD)").fill("");
    // Lifted before the next case leaves the page (it would abort the save, and its project's
    // limit would be stopped by this one instead).
    await saveLimits(lift);
  });

  it("sets a weekly limit on the project: the chat warns of it, then stops a reply naming it", async () => {
    await page.goto(`${base}/billing#settings`);
    const card = page.getByRole("region", { name: "Limits on members and projects" });
    await card.getByRole("option", { name: projectName }).waitFor({ state: "attached" });
    await card.getByLabel(/^On/).selectOption({ label: projectName });
    await card.getByLabel("Period").selectOption("week");
    // Under what the project has already spent this week.
    await card.getByLabel("Amount (USD)").fill("0.0001");
    await card.getByRole("button", { name: "Set limit" }).click();
    const row = card.getByRole("listitem").filter({ hasText: projectName });
    await expect.poll(() => row.textContent()).toContain("$0.0001 per week");
    await screenshot("limits-on-members-and-projects");

    await page.goto(`${base}/sessions/${sessionId}`);
    const chat = page.getByRole("region", { name: "Assistant chat" });
    const warning = chat.getByTestId("limit-warning");
    await expect
      .poll(() => warning.textContent())
      .toMatch(
        /^You have used 100% of this project's weekly limit .* It resets on Monday at 00:00 UTC; you can raise it in Billing\.$/,
      );
    await composerOf(chat).fill("And one for the press release");
    await chat.getByRole("button", { name: "Send" }).click();
    // One notice in the warning's place, naming the limit and its reset.
    const notice = chat.getByTestId("limit-stop");
    await expect
      .poll(() => notice.textContent())
      .toContain("This message would go over this project's weekly limit.");
    expect(await notice.textContent()).toContain("It resets on Monday at 00:00 UTC");
    expect(await warning.count()).toBe(0);
    await composerOf(chat).fill("");

    // Removed again for the rest of the run.
    await page.goto(`${base}/billing#settings`);
    await page
      .getByRole("button", { name: `Remove the limit on ${projectName}, per week` })
      .click();
    await expect
      .poll(() =>
        page
          .getByRole("region", { name: "Limits on members and projects" })
          .getByText("No limits on single members or projects.")
          .count(),
      )
      .toBe(1);
  });

  it("files an erasure request for the session, picked from a list, and sees it complete", async () => {
    await mainNav().getByRole("link", { name: "Data & privacy" }).click();
    await page.getByRole("heading", { level: 1, name: /^Data and privacy in / }).waitFor();
    const requests = page.getByRole("region", { name: "Erasure requests" });
    await requests.getByText("No erasure requests yet.").waitFor();
    await screenshot("admin");

    const form = page.getByRole("form", { name: "File an erasure request" });
    await form.getByRole("radio", { name: "Session" }).check();
    const target = form.getByLabel("What to erase");
    await expect.poll(() => target.locator("option").count()).toBeGreaterThan(1);
    await target.selectOption(sessionId);
    await form.getByLabel("Reason (optional)").fill("End-to-end test");
    await form.getByRole("button", { name: "File erasure request" }).click();
    // Filing is irreversible: it asks first.
    const dialog = page.getByRole("alertdialog");
    await dialog.getByRole("button", { name: "Erase session" }).click();
    const request = requests.getByRole("listitem").filter({ hasText: sessionTitle }).first();
    const refusal = form.getByRole("alert");
    await request.or(refusal).first().waitFor();
    if (await refusal.isVisible()) {
      throw new Error(
        `Filing the erasure request failed: "${await refusal.textContent()}". Under pnpm dev ` +
          "(scripts/dev.mjs) this is what a missing ERASURE_HASH_KEY in .dev.vars looks like.\n" +
          log().slice(-2000),
      );
    }
    // The page polls while the request is pending or running.
    await request.getByText("Completed", { exact: true }).waitFor({ timeout: 60_000 });
    // Steps in words, and no request id in the text a person reads.
    const steps = request.getByRole("list", { name: /^Steps of the erasure/ });
    await expect.poll(() => steps.textContent()).toContain("Chat transcripts");
    expect(await steps.textContent()).toContain("Verification scan");
    expect(await steps.textContent()).not.toMatch(/\b(d1|agents|verify)\b/);
    await screenshot("erasure-complete");
  });

  it("regenerates the last reply of a chat in place", async () => {
    await mainNav().getByRole("link", { name: "Projects" }).click();
    await page.getByRole("link", { name: projectName }).click();
    await page.getByRole("heading", { level: 1, name: projectName }).waitFor();
    await page.getByRole("button", { name: "New chat" }).click();
    await page.waitForURL(/\/sessions\/[^/]+$/);
    const chat = page.getByRole("region", { name: "Assistant chat" });
    const text = "Summarize the plan in one line";
    const ended = replyEnds();
    await composerOf(chat).fill(text);
    await chat.getByRole("button", { name: "Send" }).click();
    const replies = repliesOf(chat);
    await repliesEnded(replyEnds, ended);
    await expect.poll(() => replies.last().textContent()).toContain(devReply(text));
    const firstCost = await costOf(replies.last());
    await chat.getByRole("button", { name: "Regenerate" }).click();
    // The reply is answered again in place: still one reply, and a settled cost under it. Waited
    // for by its stream's end, not Send (shown until the regeneration starts) nor the text and
    // cost (the new reply's are the old one's).
    await repliesEnded(replyEnds, ended, 2);
    await chat.getByRole("button", { name: "Send" }).waitFor();
    await expect.poll(() => replies.count()).toBe(1);
    await expect.poll(() => replies.last().textContent()).toContain(devReply(text));
    await costOf(replies.last());
    // The picture shows the chat's spend with both replies in: read afresh until the account has
    // the regenerated reply's calls (the page's own read at the reply's end may come before them).
    await expect
      .poll(
        async () => {
          await page.reload();
          await page
            .getByRole("group", { name: "Versions of this reply" })
            .getByText("2 / 2")
            .waitFor();
          return micros(await spentSoFar());
        },
        { timeout: UI_TIMEOUT * 2, interval: 1_000 },
      )
      .toBeGreaterThan(micros(firstCost));
    // Pictured settled: the model picker read, the markdown renderer loaded, no focus ring.
    await page.getByRole("combobox", { name: /^Model: / }).waitFor();
    await costOf(replies.last());
    await page.waitForLoadState("networkidle").catch(() => undefined);
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await screenshot("assistant-regenerate");
  });

  it("keeps the page still while a reply streams, and resumes a reply across a dropped connection", async () => {
    // Route the assistant's WebSocket through the test, so the test can cut it like a network drop.
    const sockets: { close(options?: { code?: number; reason?: string }): Promise<void> }[] = [];
    await page.routeWebSocket(/\/agents\/assistant-agent\//, (ws) => {
      ws.connectToServer();
      sockets.push(ws);
    });
    // What the page sends: a chat request carries the new message only (the server keeps the rest).
    const requests: { messages: unknown[] }[] = [];
    page.on("websocket", (ws) =>
      ws.on("framesent", ({ payload }) => {
        const frame = typeof payload === "string" ? JSON.parse(payload) : null;
        if (frame?.type === "cf_agent_use_chat_request") requests.push(JSON.parse(frame.init.body));
      }),
    );
    await page.reload();
    const chat = page.getByRole("region", { name: "Assistant chat" });
    await composerOf(chat).waitFor();
    await expect.poll(() => sockets.length).toBeGreaterThan(0);
    // Layout shifts while a reply streams (Chromium's layout-instability API), summed as CLS.
    await page.evaluate(() => {
      const w = window as unknown as { __cls: number };
      w.__cls = 0;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries() as unknown as {
          value: number;
          hadRecentInput: boolean;
        }[]) {
          if (!entry.hadRecentInput) w.__cls += entry.value;
        }
      }).observe({ type: "layout-shift", buffered: false });
    });
    const text = "Write it out slowly";
    await composerOf(chat).fill(`${text} [[tps:12]]`);
    await chat.getByRole("button", { name: "Send" }).click();
    const replies = repliesOf(chat);
    await expect.poll(() => replies.last().textContent()).toContain("Dev model reply to: Write");
    // The connection drops mid-reply: the client reconnects by itself and the stream resumes.
    const before = sockets.length;
    await sockets.at(-1)?.close();
    await expect.poll(() => sockets.length, { timeout: 30_000 }).toBeGreaterThan(before);
    await expect
      .poll(() => replies.last().textContent(), { timeout: 30_000 })
      .toContain(devReply(text));
    await costOf(replies.last());
    const cls = await page.evaluate(() => (window as unknown as { __cls: number }).__cls);
    expect(cls).toBeLessThan(0.1);
    // The session already held an exchange, yet the request held one message.
    const mine = chat.getByRole("listitem").filter({ has: page.getByText("You said:") });
    expect(await mine.count()).toBe(2);
    expect(requests.map((body) => body.messages.length)).toEqual([1]);
    // The server closes a socket with 1013 when the token that opened it expires: the page opens a
    // new one with a fresh ticket on its own, and the chat goes on.
    const opened = sockets.length;
    await sockets.at(-1)?.close({ code: 1013, reason: "token expired" });
    await expect.poll(() => sockets.length, { timeout: 30_000 }).toBeGreaterThan(opened);
    await composerOf(chat).fill("Still there?");
    await chat.getByRole("button", { name: "Send" }).click();
    await expect
      .poll(() => replies.last().textContent(), { timeout: 30_000 })
      .toContain(devReply("Still there?"));
  });

  it("creates a second organization from the org switcher and switches back", async () => {
    await page.getByRole("button", { name: /^Organization: / }).click();
    await page.getByRole("menuitem", { name: "New organization" }).click();
    const form = page.getByRole("form", { name: "New organization" });
    await form.getByLabel("Name").fill("Difference Engines");
    await form.getByRole("button", { name: "Create organization" }).click();
    await page.getByRole("heading", { level: 1, name: "Projects in Difference Engines" }).waitFor();
    const switcher = page.getByRole("button", { name: /^Organization: / });
    await expect.poll(() => switcher.textContent()).toContain("Difference Engines");
    // The first org is still there to switch back to.
    await switcher.click();
    await page.getByRole("menuitem", { name: /Analytical Engines/ }).click();
    await page.getByRole("heading", { level: 1, name: "Projects in Analytical Engines" }).waitFor();
  });

  it("keeps tokens and message content out of the platform's logs", async () => {
    const refresh = (await page.context().cookies()).find(
      (c) => c.name === "parley_refresh",
    )?.value;
    expect(refresh).toBeTruthy();
    expect(log().length).toBeGreaterThan(0);
    for (const secret of [
      refresh ?? "",
      previewText,
      sessionText,
      "Summarize the plan in one line",
    ]) {
      expect(log()).not.toContain(secret);
    }
    // No JWT (access tokens are ES256 JWTs) anywhere in what the stack printed.
    expect(log()).not.toMatch(/eyJ[\w-]{10,}\.eyJ[\w-]{10,}/);
    // The app ran whole under its Content-Security-Policy, which also forbids framing it.
    expect(cspViolations).toEqual([]);
    const headers = (await page.request.get(`${base}/`)).headers();
    expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(headers["content-security-policy"]).toContain("script-src 'self';");
    expect(headers["x-content-type-options"]).toBe("nosniff");
    // Nor in any URL the page opened a socket with (URLs land in traces): a ticket instead.
    expect(socketUrls.length).toBeGreaterThan(0);
    for (const url of socketUrls) {
      expect(url).not.toMatch(/eyJ[\w-]{10,}\.eyJ/);
      expect(new URL(url).searchParams.has("token")).toBe(false);
      expect(new URL(url).searchParams.get("ticket")).toMatch(/^ct_/);
    }
  });
});
