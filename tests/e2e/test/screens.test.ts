import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type DevStack, startDevStack } from "../../../scripts/lib/dev-stack.mjs";
import {
  axeProblems,
  freshEmail,
  launchChromium,
  moneyOffScreen,
  openContext,
  repliesEnded,
  type Scheme,
  sidewaysOverflow,
  signUpWithProject,
  VIEWPORTS,
} from "./browser.ts";

/**
 * Every screen of the web app at 1366x900 and 390x844, in light and dark: nothing scrolls the page
 * sideways, nothing is logged as an error, axe finds no serious or critical violation, and each
 * screen has its own title. One owner's data (a project, a preview exchange, a session with a
 * markdown reply and enough messages to scroll) is made once, through the page, and every
 * combination signs in to see it. A few combinations are kept as screenshots for the README.
 */
const screenshots = path.resolve(import.meta.dirname, "../screenshots");

let stack: DevStack | undefined;
let browser: Browser | undefined;
let base = "";
const owner = { name: "Grace Hopper", email: freshEmail("grace"), org: "Compilers Unlimited" };
let projectId = "";
let sessionId = "";
let profileId = "";
let appId = "";

/** The screens, each with the path to open and the heading that says it is there. */
interface Screen {
  name: string;
  path: string;
  heading: RegExp;
  signedIn: boolean;
  /** A tab of the page the address opens (its title is the page's). */
  tab?: string;
}

const screens = (): Screen[] => [
  { name: "sign-in", path: "/signin", heading: /^Sign in to Parley$/, signedIn: false },
  { name: "sign-up", path: "/signup", heading: /^Create your account$/, signedIn: false },
  // Mail (docs/2026-12-06-mail.md): the pages a mailed link opens take any well-formed secret
  // until it is used, so one nobody issued shows them as a person sees them.
  {
    name: "forgot-password",
    path: "/forgot-password",
    heading: /^Forgot your password$/,
    signedIn: false,
  },
  {
    name: "reset-password",
    path: `/reset-password#rst_${"A".repeat(43)}`,
    heading: /^Choose a new password$/,
    signedIn: false,
  },
  {
    name: "verify-email",
    path: `/verify-email#vfy_${"A".repeat(43)}`,
    heading: /^Confirm your email address$/,
    signedIn: false,
  },
  { name: "projects", path: "/projects", heading: /^Projects in /, signedIn: true },
  { name: "project", path: `/projects/${projectId}`, heading: /^Launch plan$/, signedIn: true },
  // The chat's title, once its record is in (not the "Loading chat…" placeholder).
  {
    name: "session",
    path: `/sessions/${sessionId}`,
    heading: /^(?!Loading chat…$)./,
    signedIn: true,
  },
  { name: "billing", path: "/billing", heading: /^Billing/, signedIn: true },
  ...["Activity", "Ledger", "Settings"].map((tab) => ({
    name: `billing-${tab.toLowerCase()}`,
    path: `/billing#${tab.toLowerCase()}`,
    heading: /^Billing/,
    signedIn: true,
    tab,
  })),
  { name: "members", path: "/members", heading: /^Members/, signedIn: true },
  // Issue 29: the org's assistant profiles, its allowed models, one profile's editor.
  { name: "assistants", path: "/assistants", heading: /^Assistants in /, signedIn: true },
  {
    name: "assistants-models",
    path: "/assistants#models",
    heading: /^Assistants in /,
    signedIn: true,
    tab: "Models",
  },
  {
    name: "profile",
    path: `/assistants/profiles/${profileId}`,
    heading: /^Support assistant$/,
    signedIn: true,
  },
  { name: "developers", path: "/developers", heading: /^Developers in /, signedIn: true },
  {
    name: "developers-keys",
    path: "/developers#keys",
    heading: /^Developers in /,
    signedIn: true,
    tab: "API keys",
  },
  { name: "app", path: `/developers/apps/${appId}`, heading: /^Storefront$/, signedIn: true },
  { name: "admin", path: "/admin", heading: /^Data and privacy|^Erasure/, signedIn: true },
  { name: "account", path: "/account", heading: /^Account$/, signedIn: true },
  { name: "new-org", path: "/orgs/new", heading: /^New organization$/, signedIn: true },
];

/**
 * Kept for the README: the chat and billing on a phone in dark, the project and an assistant
 * profile's editor on a desktop.
 */
const KEEP = new Set([
  "session-phone-dark",
  "billing-desktop-dark",
  "project-desktop-light",
  "profile-desktop-light",
]);

async function signIn(page: Page): Promise<void> {
  await page.goto(`${base}/signin`);
  await page.getByLabel("Email").fill(owner.email);
  await page.getByLabel("Password").fill("correct horse battery");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === "/projects");
}

/**
 * Sends a message and resolves once its reply has ended (`replyEnds`, its stream's last frame):
 * Send alone shows before the reply starts, and the next message sent while a reply streams is
 * only kept back.
 */
async function send(page: Page, replyEnds: () => number, text: string): Promise<void> {
  const before = replyEnds();
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
  await repliesEnded(replyEnds, before);
  await page.getByRole("button", { name: "Send" }).waitFor();
}

beforeAll(async () => {
  await mkdir(screenshots, { recursive: true });
  const starting = startDevStack({ timeoutMs: 150_000 });
  browser = await launchChromium();
  stack = await starting;
  base = stack.base;

  const { context, page, replyEnds } = await openContext(browser, VIEWPORTS.desktop, "light");
  // The sign-up grant pays the chats below: the address is confirmed from the mailbox first.
  projectId = await signUpWithProject(page, stack, owner, "Launch plan");
  const preview = page.getByRole("region", { name: "Onboarding preview chat" });
  await preview.getByRole("textbox", { name: "Message" }).fill("What does a launch need?");
  await preview.getByRole("textbox", { name: "Message" }).press("Enter");
  await preview.getByText(/free turns? left/).waitFor();
  await page.getByRole("button", { name: "New chat" }).first().click();
  await page.waitForURL(/\/sessions\/[^/]+$/);
  sessionId = new URL(page.url()).pathname.split("/")[2] ?? "";
  await send(page, replyEnds, "Show me the plan as a table [[markdown]]");
  for (let turn = 1; turn <= 5; turn++) await send(page, replyEnds, `Follow-up question ${turn}`);
  await send(page, replyEnds, "Think it over first [[reasoning]]");
  // An assistant profile with a second version, so the editor shows its history.
  await page.goto(`${base}/assistants`);
  await page.getByRole("button", { name: "New profile" }).click();
  await page.getByRole("dialog").getByLabel("Name").fill("Support assistant");
  await page.getByRole("button", { name: "Create profile" }).click();
  await page.waitForURL(/\/assistants\/profiles\/[^/]+$/);
  profileId = new URL(page.url()).pathname.split("/")[3] ?? "";
  await page
    .getByLabel("Instructions", { exact: true })
    .fill("Answer briefly.\nUse the plan's words.");
  await page.getByRole("button", { name: "Save as version 2" }).click();
  await page.getByRole("list", { name: "Versions" }).getByText("Version 2").waitFor();
  // An app of the developers' area (issue 32.1), so its page has something on it.
  await page.goto(`${base}/developers`);
  await page.getByRole("button", { name: "New app" }).click();
  const app = page.getByRole("dialog", { name: "New app" });
  await app.getByLabel("Name").fill("Storefront");
  await app.getByLabel("Allowed origins").fill("https://shop.example.com");
  await app.getByRole("checkbox", { name: "Launch plan" }).check();
  await app.getByLabel("Issuer (iss)").fill("https://shop.example.com");
  await app.getByRole("button", { name: "Create app" }).click();
  await page.getByRole("link", { name: "Open Storefront" }).click();
  await page.waitForURL(/\/developers\/apps\/[^/]+$/);
  appId = new URL(page.url()).pathname.split("/")[3] ?? "";
  await context.close();
}, 300_000);

afterEach((context) => {
  if (context.task.result?.state === "fail") console.log(stack?.log().slice(-3000));
});

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await stack?.stop();
});

describe("every screen, at both sizes, light and dark", () => {
  for (const [size, viewport] of Object.entries(VIEWPORTS)) {
    for (const scheme of ["light", "dark"] as Scheme[]) {
      it(`${size} ${scheme}: no sideways scroll, no console error, no serious axe violation`, async () => {
        if (!browser) throw new Error("no browser");
        const { context, page, errors } = await openContext(browser, viewport, scheme);
        const problems: string[] = [];
        const titles = new Set<string>();
        let signedIn = false;
        for (const screen of screens()) {
          if (screen.signedIn && !signedIn) {
            await signIn(page);
            signedIn = true;
          }
          await page.goto(`${base}${screen.path}`);
          await page.getByRole("heading", { level: 1, name: screen.heading }).first().waitFor();
          if (screen.tab) {
            await page.getByRole("tab", { name: screen.tab, selected: true }).waitFor();
          }
          if (screen.name === "session") {
            // Audited with the transcript and the composer on screen, not while it connects.
            await page
              .getByRole("region", { name: "Assistant chat" })
              .getByRole("textbox")
              .waitFor();
          }
          await page.waitForLoadState("networkidle").catch(() => undefined);
          expect(
            await page.evaluate(() => document.documentElement.classList.contains("dark")),
          ).toBe(scheme === "dark");
          const overflow = await sidewaysOverflow(page);
          if (overflow > 0) problems.push(`${screen.name}: scrolls ${overflow}px sideways`);
          // Every amount on screen without scrolling a table sideways (a phone included).
          for (const amount of await moneyOffScreen(page)) {
            problems.push(`${screen.name}: ${amount} is off the side of its box`);
          }
          problems.push(...(await axeProblems(page, screen.name)));
          titles.add(await page.title());
          const shot = `${screen.name}-${size}-${scheme}`;
          if (KEEP.has(shot)) {
            await page.screenshot({ path: path.join(screenshots, `screen-${shot}.png`) });
          }
        }
        await context.close();
        expect(problems).toEqual([]);
        expect(errors).toEqual([]);
        // Each screen says where the person is (the session's title names the chat).
        expect(titles.size).toBe(screens().filter((screen) => !screen.tab).length);
        for (const title of titles) expect(title).toMatch(/ · Parley$/);
      });
    }
  }
});
