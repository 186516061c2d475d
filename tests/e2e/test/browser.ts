import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import {
  type Browser,
  type BrowserContext,
  chromium,
  type Locator,
  type Page,
  type WebSocket,
} from "playwright-core";
import { CHROMIUM } from "./global-setup.ts";

/** Debian's chromium, headless, with the background services that would make a run vary off. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
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
}

export const VIEWPORTS = {
  desktop: { width: 1366, height: 900 },
  phone: { width: 390, height: 844 },
} as const;

export type Scheme = "light" | "dark";

/**
 * How many chat replies the page's sockets have seen end, as a function to read it. A reply's
 * stream always ends with the agents SDK's `cf_agent_use_chat_response` frame marked `done` (a
 * reply, a failed one, one that stops to ask for an approval, the approved call's continuation,
 * a regenerated reply), after the frame with the reply's metadata (its cost). A test that reads a
 * reply whole, or sends the next message, waits for this count to grow past what it was before
 * the send. Send showing again is no such sign: it shows before the reply has started, and the
 * chat has been seen to show it for a moment mid-stream on a loaded machine (a message "sent"
 * then is only kept back, and a read then sees half a reply).
 *
 * Counts the sockets the page opens from now on (Playwright reports no earlier one): call it
 * before the page opens its chat. A reply that ends while the page reloads is seen by neither
 * socket: across a reload, wait for the reply's text instead.
 */
export function countReplyEnds(page: Page): () => number {
  let ended = 0;
  page.on("websocket", (socket) =>
    socket.on("framereceived", ({ payload }) => {
      if (typeof payload !== "string" || !payload.includes('"done":true')) return;
      const frame = JSON.parse(payload) as { type?: unknown; done?: unknown };
      if (frame.type === "cf_agent_use_chat_response" && frame.done === true) ended += 1;
    }),
  );
  return () => ended;
}

/**
 * Resolves once `more` replies have ended (`countReplyEnds`) since `replyEnds()` read `before`.
 * A slow reply on a loaded machine takes its time: a minute by default. A plain loop, not
 * `expect.poll`, so a suite's `beforeAll` can wait too.
 */
export async function repliesEnded(
  replyEnds: () => number,
  before: number,
  more = 1,
  timeout = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeout;
  while (replyEnds() < before + more) {
    if (Date.now() > deadline) {
      throw new Error(`${replyEnds() - before} of ${more} replies ended within ${timeout} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Resolves once a socket the page opens to a URL matching `url` has received its first frame:
 * the agent accepted the connection (the relay and the agent answered its handshake). Until then
 * the socket is still connecting, and a change of rights made meanwhile refuses the handshake
 * (which Chromium logs as an error) instead of closing an open chat. Call it before the page
 * opens the socket.
 */
export function socketAccepted(page: Page, url: RegExp, timeoutMs = 30_000): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      page.off("websocket", watch);
      reject(new Error(`no socket to ${url} answered within ${timeoutMs} ms`));
    }, timeoutMs);
    const watch = (socket: WebSocket) => {
      if (!url.test(socket.url())) return;
      socket.once("framereceived", () => {
        clearTimeout(timer);
        page.off("websocket", watch);
        resolve();
      });
    };
    page.on("websocket", watch);
  });
}

/**
 * Clicks `button` and resolves once the API answered the `method` request to a path matching
 * `path` (throws unless it answered 2xx). A save the next step relies on must have landed first:
 * Chromium aborts a request still in flight when the page reloads or leaves, and the absence of an
 * error message proves nothing (it is absent before the answer too). Listens before it clicks, so
 * an answer that comes at once is not missed.
 */
export async function clickAndAwaitApi(
  page: Page,
  button: Locator,
  method: string,
  path: RegExp,
): Promise<void> {
  const answered = page.waitForResponse(
    (response) =>
      response.request().method() === method && path.test(new URL(response.url()).pathname),
  );
  await button.click();
  const response = await answered;
  if (!response.ok()) {
    throw new Error(`${method} ${response.url()}: ${response.status()} ${await response.text()}`);
  }
}

/**
 * A browser context at a viewport and color scheme, its theme choice set to that scheme (as the
 * person would in the account menu), collecting what the page logs as errors and counting the
 * chat replies it sees end (`countReplyEnds`).
 */
export async function openContext(
  browser: Browser,
  viewport: { width: number; height: number },
  scheme: Scheme,
): Promise<{
  context: BrowserContext;
  page: Page;
  errors: string[];
  failures: string[];
  replyEnds: () => number;
}> {
  const context = await browser.newContext({
    viewport,
    colorScheme: scheme,
    ...(viewport.width < 500 ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
  });
  context.setDefaultTimeout(30_000);
  await context.addInitScript((choice) => {
    // Frames run it too; a sandboxed one (a mail's HTML in the dev mailbox) has no storage.
    try {
      localStorage.setItem("parley.theme", choice);
    } catch {
      // not the app's frame
    }
  }, scheme);
  const page = await context.newPage();
  const replyEnds = countReplyEnds(page);
  const errors: string[] = [];
  const failures: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`${page.url()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => errors.push(`${page.url()}: ${String(error)}`));
  // Which call failed, beside the browser's "Failed to load resource" line (which has no URL).
  page.on("response", (response) => {
    if (response.status() >= 400 && response.request().resourceType() !== "document") {
      failures.push(`${response.status()} ${response.request().method()} ${response.url()}`);
    }
  });
  return { context, page, errors, failures, replyEnds };
}

const axeSource = readFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
  "utf8",
);

/** axe-core's serious and critical violations on the page as it is now, one line each. */
export async function axeProblems(page: Page, label: string): Promise<string[]> {
  // An element fading in (a toast, a dialog) has a fraction of its contrast until its animation
  // ends: axe would report what nobody sees once it settles. Wait for finite animations to finish
  // (spinners and skeletons repeat forever and are left alone).
  await page
    .waitForFunction(
      () =>
        document
          .getAnimations()
          .every(
            (animation) =>
              animation.playState !== "running" ||
              animation.effect?.getTiming().iterations === Number.POSITIVE_INFINITY,
          ),
      undefined,
      { timeout: 5_000 },
    )
    .catch(() => undefined);
  // Evaluated through the debugger, not as a <script>: the app's CSP allows no inline script.
  await page.evaluate(axeSource);
  const violations = (await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } }).axe;
    return (await axe.run()).violations;
  })) as { id: string; impact: string | null; nodes: { target: string[] }[] }[];
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map(
      (v) =>
        `${label}: ${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`,
    );
}

/**
 * How far the page scrolls sideways (0 when nothing is wider than the viewport), against the width
 * the context was opened with. Not `window.innerWidth`: a phone context (`isMobile`) widens its
 * layout viewport to fit content that overflows (the browser zooms out), so `innerWidth` grew
 * with the page and every 390 px check read 0 while the page was 726 px wide (outside probe of
 * 2026-12-06: API keys, an app's end users, billing activity).
 */
export async function sidewaysOverflow(page: Page): Promise<number> {
  const width = page.viewportSize()?.width;
  if (!width) throw new Error("the page has no viewport size");
  return page.evaluate((viewport) => document.documentElement.scrollWidth - viewport, width);
}

/**
 * Amounts of money (`$0.0042`, `-$1.20`) drawn where a person cannot see them without scrolling
 * sideways: past the right edge of the box that scrolls them (a table's) or of the viewport. A
 * page can have no sideways overflow and still hide its money column inside a table that scrolls
 * (Billing's spend at 390 px): `sidewaysOverflow` does not see that, this does.
 */
export async function moneyOffScreen(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const money = /^[+-]?\$\d[\d,]*(\.\d+)?$/;
    const hidden: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent?.trim() ?? "";
      const element = node.parentElement;
      if (!money.test(text) || !element || element.closest("svg")) continue;
      const box = element.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      let right = window.innerWidth;
      for (let up = element.parentElement; up; up = up.parentElement) {
        const overflow = getComputedStyle(up).overflowX;
        if (overflow === "auto" || overflow === "scroll" || overflow === "hidden") {
          right = Math.min(right, up.getBoundingClientRect().right);
        }
      }
      if (box.right > right + 1) hidden.push(text);
    }
    return hidden;
  });
}

/** A unique address whose local part differs (the sign-up grant ignores `+tags`). */
export const freshEmail = (who: string): string =>
  `${who}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}@example.com`;

/** Signs up through the page and waits for the projects screen. */
export async function signUp(
  page: Page,
  base: string,
  { name, email, org }: { name: string; email: string; org?: string },
): Promise<void> {
  await page.goto(`${base}/signup`);
  await page.getByLabel("Name", { exact: true }).fill(name);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill("correct horse battery");
  if (org) await page.getByLabel("Organization name (optional)").fill(org);
  await submitSignUp(page, page.getByRole("button", { name: "Sign up" }));
}

/**
 * Clicks a button that signs someone up (the sign-up form, an invitation's Join) and waits for
 * their projects. Sign-ups are limited to five a minute per client address (wrangler.jsonc), and a
 * suite signs up more people than that from this one address: when the page says so, this waits
 * the minute out and clicks again, as a person would. Whether six come within one minute depends
 * on the machine's speed, so without this a suite failed on a fast run and passed on a slow one.
 */
export async function submitSignUp(page: Page, button: Locator, errors?: string[]): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    await button.click();
    const outcome = await Promise.race([
      page
        .waitForURL((url) => url.pathname === "/projects")
        .then(
          () => "in" as const,
          () => "timeout" as const,
        ),
      page
        .getByText(/Too many sign-ups/)
        .waitFor()
        .then(
          () => "limited" as const,
          () => "timeout" as const,
        ),
    ]);
    if (outcome === "in") return;
    if (outcome === "timeout") break;
    // The browser logs the refused request; that refusal is the limit working, not a fault.
    if (errors) {
      const kept = errors.filter((line) => !line.includes("429 (Too Many Requests)"));
      errors.splice(0, errors.length, ...kept);
    }
    await page.waitForTimeout(61_000);
  }
  await page.waitForURL((url) => url.pathname === "/projects", { timeout: 5_000 });
}

/**
 * Opens the newest mail of `subject` to `email` in the development mailbox (its pages, as a
 * person reads them) and clicks its link to `linkPath`; resolves on the app's page it opened.
 * The mail goes out after the answer (the outbox), so the list is reloaded until it is there.
 */
export async function openMailLink(
  page: Page,
  mailbox: string,
  { email, subject, linkPath }: { email: string; subject: RegExp; linkPath: string },
): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    await page.goto(mailbox);
    const message = page
      .getByRole("link")
      .filter({ has: page.locator(".subject", { hasText: subject }) })
      .filter({ hasText: email })
      .first();
    if ((await message.count()) > 0) {
      await message.click();
      break;
    }
    if (Date.now() > deadline) throw new Error(`no mail "${subject}" to ${email} in the mailbox`);
    await page.waitForTimeout(250);
  }
  await page.getByRole("heading", { level: 1, name: subject }).waitFor();
  await page
    .getByRole("list")
    .getByRole("link", { name: new RegExp(`${linkPath.replaceAll("/", "\\/")}#`) })
    .first()
    .click();
  await page.waitForURL((url) => url.pathname === linkPath);
}

/** Confirms the address a sign-up mailed a link to, through the mailbox, as its owner would. */
export async function verifyEmailFromMailbox(
  page: Page,
  mailbox: string,
  email: string,
): Promise<void> {
  await openMailLink(page, mailbox, {
    email,
    subject: /^Confirm your email address for Parley$/,
    linkPath: "/verify-email",
  });
  await page.getByRole("button", { name: "Confirm my address" }).click();
  await page.getByRole("heading", { name: "Email address confirmed" }).waitFor();
}

/**
 * What most suites start from: an owner signed up through the page, their address confirmed from
 * the mailbox (so the sign-up grant pays the chats that follow), and a first project made on the
 * projects screen. Resolves on the project's page with its id.
 */
export async function signUpWithProject(
  page: Page,
  stack: { base: string; mailbox: string },
  owner: { name: string; email: string; org?: string },
  projectName: string,
): Promise<string> {
  await signUp(page, stack.base, owner);
  await verifyEmailFromMailbox(page, stack.mailbox, owner.email);
  await page.goto(`${stack.base}/projects`);
  const form = page.getByRole("form", { name: "New project" });
  await form.getByLabel("Name").fill(projectName);
  await form.getByRole("button", { name: "Create project" }).click();
  await page.waitForURL(/\/projects\/[^/]+$/);
  return new URL(page.url()).pathname.split("/")[2] ?? "";
}
