import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { devReply } from "@parley/dev-model/reply";
import { type Browser, chromium, type Locator, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type DevStack, startDevStack } from "../../../scripts/lib/dev-stack.mjs";
import { CHROMIUM } from "./global-setup.ts";

/**
 * The web app in a real browser (Debian's chromium through playwright-core) against the whole
 * platform started the way `pnpm dev` starts it (scripts/dev.mjs: web build, migrations, wrangler
 * dev, dev model, Stripe stand-in), with its state in a temporary directory. Each step leaves a
 * screenshot in screenshots/.
 */
const screenshots = path.resolve(import.meta.dirname, "../screenshots");
const UI_TIMEOUT = 30_000;

/** "$24.99" -> 2499 (cents); the billing page shows whole cents for amounts of a cent or more. */
function cents(text: string): number {
  const match = /^\$([\d,]+)\.(\d{2})$/.exec(text.trim());
  if (!match) throw new Error(`not a dollar amount in cents: ${JSON.stringify(text)}`);
  return Number((match[1] ?? "").replaceAll(",", "")) * 100 + Number(match[2]);
}

let stack: DevStack | undefined;
let base = "";
/** Everything the stack printed so far. */
const log = () => stack?.log() ?? "";
let browser: Browser | undefined;
let page: Page;
/** Every WebSocket URL the page opened: each carries a connect ticket, none a bearer token. */
const socketUrls: string[] = [];
/** What the browser refused under the app's Content-Security-Policy: nothing, on every screen. */
const cspViolations: string[] = [];
let shot = 0;

async function screenshot(name: string): Promise<void> {
  shot += 1;
  await page.screenshot({ path: path.join(screenshots, `${shot}-${name}.png`), type: "png" });
}

/** The available balance as displayed on the billing page, once it has loaded. */
function availableBalance(): Locator {
  return page
    .getByRole("term")
    .filter({ hasText: /^Available$/ })
    .locator("..")
    .getByRole("definition");
}

beforeAll(async () => {
  await mkdir(screenshots, { recursive: true });
  const starting = startDevStack({ timeoutMs: 150_000 });
  const launching = chromium.launch({
    executablePath: CHROMIUM,
    // Each launch gets a fresh, temporary user-data dir from Playwright, removed on close.
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
  stack = await starting;
  base = stack.base;
  browser = await launching;
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(UI_TIMEOUT);
  page = await context.newPage();
  page.on("websocket", (ws) => socketUrls.push(ws.url()));
  page.on("console", (message) => {
    if (/Content.Security.Policy|Refused to/i.test(message.text()))
      cspViolations.push(message.text());
  });
}, 180_000);

// A failed step leaves a picture of the page outside the commit-worthy screenshots.
afterEach(async (context) => {
  if (context.task.result?.state !== "fail" || !browser) return;
  const file = path.join(tmpdir(), `parley-e2e-failure-${Date.now()}.png`);
  await page.screenshot({ path: file, type: "png" }).catch(() => undefined);
  console.log(`[e2e] ${context.task.name} failed at ${page.url()}; page saved to ${file}`);
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
  const projectName = "Launch plan";
  let sessionId = "";
  let balanceBeforeTopUp = 0;
  /** The price under the assistant's reply, as displayed ("$0.000116"). */
  let turnCost = "";

  it("signs up", async () => {
    await page.goto(`${base}/signup`);
    await expect
      .poll(() => page.getByRole("heading", { name: "Create your account" }).isVisible())
      .toBe(true);
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

  it("creates a project", async () => {
    const form = page.getByRole("form", { name: "New project" });
    await form.getByLabel("Name").fill(projectName);
    await form.getByRole("button", { name: "Create project" }).click();
    await page.getByRole("heading", { level: 1, name: projectName }).waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/projects\/[^/]+$/);
  });

  it("chats in the onboarding preview and sees the dev model's reply", async () => {
    const chat = page.getByRole("region", { name: "Onboarding preview chat" });
    await chat.getByText("No messages yet. Say hello.").waitFor();
    await chat.getByLabel("Message").fill(previewText);
    await chat.getByRole("button", { name: "Send" }).click();
    const reply = chat.getByRole("listitem").filter({ hasText: "Assistant:" }).last();
    await expect.poll(() => reply.textContent()).toContain(devReply(previewText));
    // The reply's metadata says how many free turns are left.
    await chat.getByText(/\d+ free turns? left/).waitFor();
    await chat.getByRole("button", { name: "Send" }).waitFor();
    await screenshot("onboarding-preview");
  });

  it("opens a new assistant session and chats in it", async () => {
    await page.getByRole("button", { name: "New session" }).click();
    await page.waitForURL(/\/sessions\/[^/]+$/);
    sessionId = decodeURIComponent(new URL(page.url()).pathname.split("/")[2] ?? "");
    expect(sessionId).toMatch(/^ses_/);
    const chat = page.getByRole("region", { name: "Assistant chat" });
    await chat.getByText("No messages yet. Say hello.").waitFor();
    await chat.getByLabel("Message").fill(sessionText);
    await chat.getByRole("button", { name: "Send" }).click();
    const reply = chat.getByRole("listitem").filter({ hasText: "Assistant:" }).last();
    await expect.poll(() => reply.textContent()).toContain(devReply(sessionText));
    // Settled: the reply shows its price.
    const cost = reply.getByText(/^Cost \$\d/);
    await cost.waitFor();
    turnCost = ((await cost.textContent()) ?? "").replace(/^Cost /, "");
    expect(turnCost).toMatch(/^\$\d/);
    await chat.getByRole("button", { name: "Send" }).waitFor();
    await screenshot("assistant-session");
  });

  it("tops up $20 through the Stripe stand-in's Checkout page and sees the balance rise", async () => {
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Billing" })
      .click();
    await page.getByRole("heading", { level: 1, name: /^Billing/ }).waitFor();
    await availableBalance().waitFor();
    // No reply is running, so nothing is held and "Available" is the whole balance.
    balanceBeforeTopUp = cents((await availableBalance().textContent()) ?? "");
    // The $5.00 sign-up grant minus what the assistant turn cost (the preview is free).
    expect(balanceBeforeTopUp).toBeLessThanOrEqual(500);
    expect(balanceBeforeTopUp).toBeGreaterThan(400);
    await screenshot("billing-before-top-up");

    const topUp = page.getByRole("form", { name: "Top up credits" });
    await topUp.getByLabel("Amount in US dollars").fill("20");
    await topUp.getByRole("button", { name: "Top up" }).click();
    // The app leaves for the stand-in's pay page, on the stand-in's own port.
    await page.waitForURL((url) => url.origin !== base);
    await page.locator("#pay").waitFor();
    await screenshot("stripe-checkout");
    await page.locator("#pay").click();
    await page.waitForURL((url) => url.origin === base && url.pathname === "/billing");
    await page.getByText("Payment received.").waitFor();

    // The signed webhook credits the org shortly after the redirect: reload until it shows.
    await expect
      .poll(
        async () => {
          await page.reload();
          await availableBalance().waitFor();
          return cents((await availableBalance().textContent()) ?? "");
        },
        { timeout: UI_TIMEOUT, interval: 500 },
      )
      .toBe(balanceBeforeTopUp + 2000);
    await screenshot("billing-after-top-up");
  });

  it("shows the assistant turn in the billing usage (when the page has usage)", async () => {
    const usage = page.getByRole("region", { name: /usage|spend/i });
    if ((await usage.count()) === 0) {
      console.log("[e2e] the billing page shows no usage chart or list yet: usage check skipped");
      return;
    }
    const groupBy = usage.getByRole("combobox", { name: "Group by" });
    if ((await groupBy.count()) > 0) {
      // Grouped by session, the turn is the row of this session, at the price the reply showed.
      await groupBy.selectOption("session");
      const row = usage.getByRole("row").filter({ hasText: sessionId });
      await expect.poll(() => row.textContent()).toContain(turnCost);
    } else {
      await expect.poll(() => usage.textContent()).toContain(turnCost);
    }
    await usage.scrollIntoViewIfNeeded();
    await screenshot("billing-usage");
  });

  it("files an erasure request for the session and sees it complete (when the app has admin)", async () => {
    const nav = page.getByRole("navigation", { name: "Main" });
    const admin = nav.getByRole("link", { name: /admin|erasure/i });
    if ((await admin.count()) === 0) {
      console.log("[e2e] no Admin/Erasure link in the main navigation yet: erasure check skipped");
      return;
    }
    await admin.first().click();
    await page.getByRole("heading", { level: 1, name: /^Admin/ }).waitFor();
    const requests = page.getByRole("region", { name: "Erasure requests" });
    await requests.getByText("No erasure requests yet.").waitFor();
    await screenshot("admin");

    const form = page.getByRole("form", { name: "File an erasure request" });
    await form.getByLabel("What to erase").selectOption("session");
    await form.getByLabel("Id", { exact: true }).fill(sessionId);
    await form.getByLabel("Reason (optional)").fill("End-to-end test");
    await form.getByRole("button", { name: "File erasure request" }).click();
    // Filed: the request is listed. Refused: the form says why; fail with that, not a timeout.
    const request = requests.getByRole("listitem").filter({ hasText: "End-to-end test" }).first();
    const refusal = form.getByRole("alert");
    await request.or(refusal).first().waitFor();
    if (await refusal.isVisible()) {
      throw new Error(
        `Filing the erasure request failed: "${await refusal.textContent()}". Under pnpm dev ` +
          "(scripts/dev.mjs) this is what a missing ERASURE_HASH_KEY in .dev.vars looks like.\n" +
          log().slice(-2000),
      );
    }

    // The page polls while the request is pending or running; its head line ends with the status.
    const head = request.getByRole("paragraph").first();
    await expect.poll(() => head.textContent(), { timeout: 60_000 }).toMatch(/completed$/);
    await screenshot("erasure-complete");
  });

  it("opens the assistant as a panel in the project page, and regenerates its last reply", async () => {
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Projects" })
      .click();
    await page.getByRole("link", { name: projectName }).click();
    await page.getByRole("heading", { level: 1, name: projectName }).waitFor();
    const panel = page.getByRole("region", { name: "In-app assistant" });
    await page.getByRole("button", { name: "Ask the assistant here" }).click();
    const text = "Summarize the plan in one line";
    await panel.getByLabel("Message").fill(text);
    await panel.getByRole("button", { name: "Send" }).click();
    const replies = panel.getByRole("listitem").filter({ hasText: "Assistant:" });
    await expect.poll(() => replies.last().textContent()).toContain(devReply(text));
    await replies
      .last()
      .getByText(/^Cost \$\d/)
      .waitFor();
    await panel.getByRole("button", { name: "Regenerate" }).click();
    // The reply is answered again in place: still one reply, and a settled cost under it.
    await panel.getByRole("button", { name: "Send" }).waitFor();
    await expect.poll(() => replies.count()).toBe(1);
    await expect.poll(() => replies.last().textContent()).toContain(devReply(text));
    await replies
      .last()
      .getByText(/^Cost \$\d/)
      .waitFor();
    await screenshot("assistant-panel");
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
    await page.getByRole("button", { name: "Ask the assistant here" }).click();
    const panel = page.getByRole("region", { name: "In-app assistant" });
    await panel.getByLabel("Message").waitFor();
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
    await panel.getByLabel("Message").fill(`${text} [[tps:12]]`);
    await panel.getByRole("button", { name: "Send" }).click();
    const replies = panel.getByRole("listitem").filter({ hasText: "Assistant:" });
    await expect.poll(() => replies.last().textContent()).toContain("Dev model reply to: Write");
    // The connection drops mid-reply: the client reconnects by itself and the stream resumes.
    const before = sockets.length;
    await sockets.at(-1)?.close();
    await expect.poll(() => sockets.length, { timeout: 30_000 }).toBeGreaterThan(before);
    await expect
      .poll(() => replies.last().textContent(), { timeout: 30_000 })
      .toContain(devReply(text));
    await replies
      .last()
      .getByText(/^Cost \$\d/)
      .waitFor({ timeout: 30_000 });
    const cls = await page.evaluate(() => (window as unknown as { __cls: number }).__cls);
    expect(cls).toBeLessThan(0.1);
    // The session already held an exchange (the panel continues it), yet the request held one message.
    expect(await panel.getByRole("listitem").filter({ hasText: "You:" }).count()).toBe(2);
    expect(requests.map((body) => body.messages.length)).toEqual([1]);
    // The server closes a socket with 1013 when the token that opened it expires: the page opens a
    // new one with a fresh ticket on its own, and the chat goes on.
    const opened = sockets.length;
    await sockets.at(-1)?.close({ code: 1013, reason: "token expired" });
    await expect.poll(() => sockets.length, { timeout: 30_000 }).toBeGreaterThan(opened);
    await panel.getByLabel("Message").fill("Still there?");
    await panel.getByRole("button", { name: "Send" }).click();
    await expect
      .poll(() => replies.last().textContent(), { timeout: 30_000 })
      .toContain(devReply("Still there?"));
  });
  it("has no serious or critical accessibility violations on its main screens (axe-core)", async () => {
    const axeSource = readFileSync(
      createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
      "utf8",
    );
    const screens: [string, () => Promise<void>][] = [
      [
        "projects",
        () =>
          page
            .getByRole("navigation", { name: "Main" })
            .getByRole("link", { name: "Projects" })
            .click(),
      ],
      ["project", () => page.getByRole("link", { name: projectName }).click()],
      [
        "billing",
        async () => {
          await page
            .getByRole("navigation", { name: "Main" })
            .getByRole("link", { name: "Billing" })
            .click();
          // The spend chart loads in its own chunk: audit the page with it drawn.
          await page.locator(".chart svg").first().waitFor();
        },
      ],
      [
        "members",
        () =>
          page
            .getByRole("navigation", { name: "Main" })
            .getByRole("link", { name: "Members" })
            .click(),
      ],
      [
        "admin",
        () =>
          page
            .getByRole("navigation", { name: "Main" })
            .getByRole("link", { name: "Admin" })
            .click(),
      ],
    ];
    const problems: string[] = [];
    for (const [name, open] of screens) {
      await open();
      await page.getByRole("heading", { level: 1 }).first().waitFor();
      await page.waitForLoadState("networkidle").catch(() => undefined);
      // Evaluated through the debugger, not as a <script>: the app's CSP allows no inline script.
      await page.evaluate(axeSource);
      const violations = (await page.evaluate(async () => {
        const axe = (window as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } })
          .axe;
        return (await axe.run()).violations;
      })) as { id: string; impact: string | null; nodes: { target: string[] }[] }[];
      for (const v of violations) {
        if (v.impact === "serious" || v.impact === "critical") {
          problems.push(
            `${name}: ${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`,
          );
        }
      }
    }
    expect(problems).toEqual([]);
  });
  it("creates a second organization from the header and switches to it", async () => {
    await page.getByRole("link", { name: "New organization" }).click();
    await page.getByLabel("Name").fill("Difference Engines");
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.getByRole("heading", { level: 1, name: "Projects in Difference Engines" }).waitFor();
    const switcher = page.getByRole("combobox", { name: "Organization" });
    await expect
      .poll(() => switcher.locator("option:checked").textContent())
      .toBe("Difference Engines (owner)");
    // The first org is still there to switch back to.
    await switcher.selectOption({ label: "Analytical Engines (owner)" });
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
