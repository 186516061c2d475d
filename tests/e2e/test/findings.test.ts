import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type DevStack, startDevStack } from "../../../scripts/lib/dev-stack.mjs";
import {
  clickAndAwaitApi,
  freshEmail,
  launchChromium,
  openContext,
  repliesEnded,
  sidewaysOverflow,
  signUp,
  signUpWithProject,
  submitSignUp,
  VIEWPORTS,
} from "./browser.ts";

/**
 * What a new user hit in the web app before issue 13, one case each, in Chromium against the
 * platform started as `pnpm dev` starts it: the chat (scrolling, spend, markdown, reasoning,
 * stopped and failed replies, the thinking indicator, titles), the shell at 390 and 1366 px,
 * titles and focus, the signed-out console, the favicon, the account deletion notice.
 */
let stack: DevStack | undefined;
let browser: Browser | undefined;
let base = "";
let page: Page;
let errors: string[] = [];
let failures: string[] = [];
/** How many chat replies the owner's page has seen end (browser.ts `countReplyEnds`). */
let replyEnds: () => number = () => 0;
let closeContext: () => Promise<void> = async () => undefined;
const owner = {
  name: "Katherine Johnson",
  email: freshEmail("katherine"),
  org: "Trajectory Analysis and Orbital Mechanics Incorporated",
};
let projectId = "";
let sessionId = "";

const chat = (): Locator => page.getByRole("region", { name: "Assistant chat" });
const composer = (): Locator => page.getByRole("textbox", { name: "Message" });
const replies = (): Locator =>
  chat()
    .getByRole("listitem")
    .filter({ has: page.getByText("Assistant said:") });

/**
 * Sends a message and resolves once its reply has ended (its stream's last frame), so what
 * follows reads the whole reply: Send alone shows before the reply starts, and has been seen for
 * a moment mid-stream on a loaded machine.
 */
async function send(text: string): Promise<void> {
  const before = replyEnds();
  await composer().fill(text);
  await composer().press("Enter");
  await repliesEnded(replyEnds, before);
  await page.getByRole("button", { name: "Send" }).waitFor();
}

/** Signs the owner in through the sign-in form already on screen in `p`. */
async function fillSignIn(p: Page): Promise<void> {
  await p.getByLabel("Email").fill(owner.email);
  await p.getByLabel("Password").fill("correct horse battery");
  await p.getByRole("button", { name: "Sign in" }).click();
}

/** A fresh access token for the owner, from the page's own refresh cookie. */
async function accessToken(): Promise<string> {
  const res = await page.request.post(`${base}/api/auth/refresh`, { headers: { origin: base } });
  return ((await res.json()) as { accessToken: string }).accessToken;
}

/** Whether the element is inside the viewport (what a person sees without scrolling). */
const inView = (locator: Locator): Promise<boolean> =>
  locator.evaluate((element) => {
    const box = element.getBoundingClientRect();
    return box.bottom > 0 && box.top < window.innerHeight && box.height > 0;
  });

beforeAll(async () => {
  const starting = startDevStack({ timeoutMs: 150_000 });
  browser = await launchChromium();
  stack = await starting;
  base = stack.base;
  const opened = await openContext(browser, VIEWPORTS.desktop, "light");
  page = opened.page;
  errors = opened.errors;
  failures = opened.failures;
  replyEnds = opened.replyEnds;
  closeContext = () => opened.context.close();
  // The sign-up grant pays the chats below: the address is confirmed from the mailbox first.
  projectId = await signUpWithProject(page, stack, owner, "Orbits");
}, 240_000);

afterEach(async (context) => {
  if (context.task.result?.state === "fail") console.log(stack?.log().slice(-2000));
});

afterAll(async () => {
  await closeContext().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await stack?.stop();
});

describe("the chat", () => {
  it("starts from one 'New chat', and the session's title shows after the first turn without a reload", async () => {
    // The project page has one way in; the old three buttons are gone.
    await expect.poll(() => page.getByRole("button", { name: "New chat" }).count()).toBe(1);
    for (const old of ["New session", "Start an assistant session", "Ask the assistant here"]) {
      expect(await page.getByRole("button", { name: old }).count()).toBe(0);
    }
    await page.getByRole("button", { name: "New chat" }).click();
    await page.waitForURL(/\/sessions\/[^/]+$/);
    sessionId = new URL(page.url()).pathname.split("/")[2] ?? "";
    await page.getByRole("heading", { level: 1, name: "Untitled session" }).waitFor();
    await send("Plan the transfer orbit to the Moon");
    await page
      .getByRole("heading", { level: 1, name: "Plan the transfer orbit to the Moon" })
      .waitFor();
    await expect.poll(() => page.title()).toBe("Plan the transfer orbit to the Moon · Parley");
  });

  it("shows the session's real spend, not $0.00", async () => {
    const spend = page.getByText(/^Spent so far/).locator("..");
    // The page reads the session once as the turn ends, and that read waits for the chat to
    // report its calls at most 2 s: on a loaded machine it can miss them. A fresh load reads again.
    await expect
      .poll(
        async () => {
          await page.reload();
          await page
            .getByRole("heading", { level: 1, name: "Plan the transfer orbit to the Moon" })
            .waitFor();
          return (await spend.textContent()) ?? "";
        },
        { timeout: 30_000, interval: 1_000 },
      )
      .toMatch(/\$0\.0*[1-9]/);
  });

  it("renders a reply's markdown as elements, with a copy button on its code", async () => {
    await send("Lay it out [[markdown]]");
    const reply = replies().last();
    await reply.getByRole("heading", { level: 2 }).waitFor();
    expect(await reply.getByRole("table").count()).toBe(1);
    expect(await reply.getByRole("listitem").count()).toBeGreaterThan(0);
    expect(await reply.locator("pre code, code").count()).toBeGreaterThan(0);
    expect(await reply.getByRole("button", { name: /copy code/i }).count()).toBeGreaterThan(0);
    expect(await reply.textContent()).not.toContain("**");
    expect(await reply.textContent()).not.toContain("```");
  });

  it("keeps reasoning apart from the answer, collapsed once the answer is there", async () => {
    await send("Think first [[reasoning]]");
    const toggle = replies().last().getByRole("button", { name: "Reasoning" });
    await toggle.waitFor();
    expect(await toggle.getAttribute("aria-expanded")).toBe("false");
    await toggle.click();
    expect(await toggle.getAttribute("aria-expanded")).toBe("true");
  });

  it("shows 'Thinking…' between Send and the first token", async () => {
    const before = replyEnds();
    await composer().fill("Take your time [[latency:1500]]");
    await composer().press("Enter");
    await chat().getByRole("status").filter({ hasText: "Thinking…" }).waitFor();
    await repliesEnded(replyEnds, before);
    await page.getByRole("button", { name: "Send" }).waitFor();
    expect(await chat().getByText("Thinking…").count()).toBe(0);
  });

  it("marks a stopped reply 'Stopped' with what it cost", async () => {
    await composer().fill("Write it out slowly [[tps:4]] [[tokens:200]]");
    await composer().press("Enter");
    await replies()
      .last()
      .getByText(/Dev model reply to/)
      .waitFor();
    // Esc stops a reply while Stop is shown. Under load the chat has been seen to show Send for a
    // moment mid-stream (its busy state flickered, root cause not found yet): an Esc in that
    // moment does nothing, so it is pressed again while Stop is still there.
    const reply = replies().last();
    const stop = page.getByRole("button", { name: "Stop" });
    await expect
      .poll(
        async () => {
          if (await stop.isVisible()) await composer().press("Escape");
          return reply.getByText("Stopped").count();
        },
        { timeout: 20_000 },
      )
      .toBe(1);
    await page.getByRole("button", { name: "Send" }).waitFor();
    await expect.poll(async () => (await reply.textContent()) ?? "").toMatch(/Cost \$\d/);
  });

  it("marks a failed reply 'Failed' inside its own bubble", async () => {
    await send("Break halfway [[error-after:3]]");
    const reply = replies().last();
    await reply.getByText("Failed").waitFor();
    expect(await reply.getByRole("alert").count()).toBe(1);
  });

  it("opens a long session at its newest message, follows it, and offers 'Jump to newest' when scrolled up", async () => {
    for (let turn = 1; turn <= 4; turn++) await send(`Another question, number ${turn}`);
    await page.reload();
    const newest = replies().last();
    await newest.getByText(devReplyStart("Another question, number 4")).waitFor();
    await expect.poll(() => inView(newest)).toBe(true);
    // The page itself never grows with the transcript: only the chat scrolls.
    const page_ = await page.evaluate(() => ({
      scroll: document.documentElement.scrollHeight,
      height: window.innerHeight,
    }));
    expect(page_.scroll).toBeLessThanOrEqual(page_.height + 1);
    const scrollUp = () =>
      chat()
        .getByRole("list")
        .first()
        .evaluate((list) => {
          let scroller: HTMLElement | null = list.parentElement;
          while (scroller && scroller.scrollHeight <= scroller.clientHeight) {
            scroller = scroller.parentElement;
          }
          scroller?.scrollTo({ top: 0 });
        });
    const jump = page.getByRole("button", { name: "Jump to newest" });
    // Scrolled up as a person would, again if the first came while the reloaded transcript was
    // still settling (its markdown renderer arrives after the text and re-lays the replies out:
    // one CI run in four saw the view follow that back down, and no button).
    await expect
      .poll(async () => {
        await scrollUp();
        return jump.count();
      })
      .toBeGreaterThan(0);
    await jump.click();
    await expect.poll(() => inView(newest)).toBe(true);
    await expect.poll(() => jump.count()).toBe(0);
    // A new message is followed to the bottom as it streams.
    await send("And one more");
    await expect.poll(() => inView(replies().last())).toBe(true);
  });

  it("opens a session of over 40 messages at its newest 40 and loads the earlier ones when scrolled to the top", async () => {
    // The transcript's own items (a reply's markdown may hold lists of its own).
    const items = () => chat().locator('ol[aria-label="Assistant chat messages"] > li');
    await page.reload();
    await replies().last().waitFor();
    for (let count = await items().count(); count <= 40; count = await items().count()) {
      await send(`Filling the session, at ${count} messages`);
      await expect.poll(() => items().count()).toBeGreaterThanOrEqual(count + 2);
      await page.getByRole("button", { name: "Send" }).waitFor();
    }
    const total = await items().count();
    await page.reload();
    const earlier = chat().getByRole("button", { name: `Show earlier messages (${total - 40})` });
    await earlier.waitFor();
    expect(await items().count()).toBe(40);
    await expect.poll(() => inView(replies().last())).toBe(true);
    // Scrolled to the top, the earlier messages come in above, and the person's first message is there.
    // Scrolled as a person does, with the wheel: a programmatic jump to the top that lands while the
    // replies still lay out (highlighted code arriving) is taken back by the stick-to-bottom, which
    // a wheel tells apart as the reader's own scroll. Each poll scrolls again.
    await chat().locator('ol[aria-label="Assistant chat messages"]').hover();
    await expect
      .poll(async () => {
        await page.mouse.wheel(0, -20_000);
        return items().count();
      })
      .toBe(total);
    expect(await earlier.count()).toBe(0);
  });

  it("asks before the assistant writes the project's memory, and writes it only when approved", async () => {
    await send('Remember the tone [[tool:update_project_memory {"set":{"tone":"dry"}}]]');
    const card = replies().last();
    await card.getByRole("button", { name: "Approve" }).waitFor();
    expect(await card.getByRole("button", { name: "Deny" }).count()).toBe(1);
    await expect.poll(() => inView(card.getByRole("button", { name: "Approve" }))).toBe(true);
    const before = replyEnds();
    await card.getByRole("button", { name: "Approve" }).click();
    // The approved call runs in the reply's continuation: its end, not Send (shown all along).
    await repliesEnded(replyEnds, before);
    await page.getByRole("button", { name: "Send" }).waitFor();
    await expect.poll(() => card.getByRole("button", { name: "Approve" }).count()).toBe(0);
    // Read until the write shows: the API answers from the project's row, not from the chat.
    const token = await accessToken();
    await expect
      .poll(async () => {
        const project = await page.request.get(`${base}/api/projects/${projectId}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        return ((await project.json()) as { memory: Record<string, unknown> }).memory;
      })
      .toEqual({ tone: "dry" });
  });

  it("renames and deletes a chat from the sidebar, the delete behind a confirmation", async () => {
    const sidebar = page.getByRole("complementary", { name: "Chats of this project" });
    await sidebar
      .getByRole("button", { name: /^Rename / })
      .first()
      .click();
    const input = sidebar.getByRole("textbox", { name: /^Rename / });
    await input.fill("Lunar transfer");
    await input.press("Enter");
    await page.getByRole("heading", { level: 1, name: "Lunar transfer" }).waitFor();
    await sidebar.getByRole("button", { name: "Delete Lunar transfer" }).click();
    const dialog = page.getByRole("alertdialog");
    await dialog.getByText(/cannot be undone/).waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    expect(new URL(page.url()).pathname).toBe(`/sessions/${sessionId}`);
    await sidebar.getByRole("button", { name: "Delete Lunar transfer" }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Delete chat" }).click();
    await page.waitForURL((url) => url.pathname === `/projects/${projectId}`);
  });
});

/** The first words of the dev model's reply to `text` (it echoes the prompt). */
const devReplyStart = (text: string) => `Dev model reply to: ${text}`;

describe("navigation and the shell", () => {
  it("titles each screen, marks the current page and moves focus to its heading", async () => {
    const nav = page.getByRole("navigation", { name: "Main" });
    await nav.getByRole("link", { name: "Billing" }).click();
    await page.waitForURL((url) => url.pathname === "/billing");
    const heading = page.getByRole("heading", { level: 1 });
    await heading.waitFor();
    await expect.poll(() => page.title()).toMatch(/^Billing · Parley$/);
    expect(await nav.getByRole("link", { name: "Billing" }).getAttribute("aria-current")).toBe(
      "page",
    );
    expect(await nav.getByRole("link", { name: "Projects" }).getAttribute("aria-current")).toBe(
      null,
    );
    await expect.poll(() => page.evaluate(() => document.activeElement?.tagName ?? "")).toBe("H1");
  });

  it("keeps the top bar on one 56 px line at 1366 px with a long org name", async () => {
    const bar = page.getByRole("banner");
    expect((await bar.boundingBox())?.height).toBe(56);
  });

  it("fits a phone: a 56 px bar with a menu, nothing sideways, a composer of three lines", async () => {
    if (!browser) throw new Error("no browser");
    const phone = await openContext(browser, VIEWPORTS.phone, "dark");
    const p = phone.page;
    await p.goto(`${base}/signin`);
    await fillSignIn(p);
    await p.waitForURL((url) => url.pathname === "/projects");
    expect((await p.getByRole("banner").boundingBox())?.height).toBe(56);
    // Navigation sits behind the menu button.
    expect(await p.getByRole("navigation", { name: "Main" }).isVisible()).toBe(false);
    await p.getByRole("button", { name: "Open menu" }).click();
    await p.getByRole("dialog").getByRole("link", { name: "Members" }).click();
    await p.waitForURL((url) => url.pathname === "/members");
    await p.getByRole("heading", { level: 1 }).waitFor();
    expect(await sidewaysOverflow(p)).toBe(0);
    // The ledger's amounts are on screen, not off the side of a table wider than the phone.
    await p.goto(`${base}/billing#ledger`);
    const entry = p
      .getByRole("list", { name: "Ledger entries, newest first" })
      .getByRole("listitem")
      .first();
    for (const label of ["Amount", "Balance after"]) {
      const value = entry.getByRole("term").filter({ hasText: label }).locator("+ dd");
      await value.waitFor();
      const box = await value.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= VIEWPORTS.phone.width).toBe(true);
    }
    await p.goto(`${base}/projects/${projectId}`);
    await p.getByRole("button", { name: "New chat" }).click();
    await p.waitForURL(/\/sessions\//);
    await p.getByRole("heading", { level: 1, name: "Untitled session" }).waitFor();
    const composer = p.getByRole("region", { name: "Assistant chat" }).getByRole("textbox", {
      name: "Message",
    });
    await expect
      .poll(async () => (await composer.boundingBox())?.height ?? 0)
      .toBeGreaterThanOrEqual(60);
    expect(await sidewaysOverflow(p)).toBe(0);
    expect(phone.errors).toEqual([]);
    await phone.context.close();
  });

  it("restores a returning visitor's session on reload with one refresh, the one the page started before the app", async () => {
    const refreshes: string[] = [];
    const count = (request: { url(): string }) => {
      if (new URL(request.url()).pathname === "/api/auth/refresh") refreshes.push(request.url());
    };
    page.on("request", count);
    try {
      await page.goto(`${base}/members`);
      await page.getByRole("heading", { level: 1, name: "Members" }).waitFor();
      // boot.js asked, the app took its answer: one refresh, so the rotating token is never
      // presented twice (a second use would end the sign-in everywhere).
      expect(refreshes).toHaveLength(1);
      expect(await page.evaluate(() => "__parleyEarlyRefresh" in window)).toBe(true);
      expect(
        await page.evaluate(
          () => (window as unknown as Record<string, unknown>).__parleyEarlyRefresh,
        ),
      ).toBeUndefined();
    } finally {
      page.off("request", count);
    }
  });

  it("opens the page a signed-out visitor asked for once they sign in", async () => {
    if (!browser) throw new Error("no browser");
    // A chat of the owner's own (the chat tests erase some of theirs).
    const created = await page.request.post(`${base}/api/projects/${projectId}/sessions`, {
      headers: {
        authorization: `Bearer ${await accessToken()}`,
        "content-type": "application/json",
      },
      data: {},
    });
    const target = ((await created.json()) as { id: string }).id;
    const visitor = await openContext(browser, VIEWPORTS.desktop, "light");
    try {
      const p = visitor.page;
      await p.goto(`${base}/sessions/${target}`);
      await p.waitForURL((url) => url.pathname === "/signin");
      expect(new URL(p.url()).searchParams.get("next")).toBe(`/sessions/${target}`);
      await fillSignIn(p);
      await p.waitForURL((url) => url.pathname === `/sessions/${target}`);
      await p.getByRole("region", { name: "Assistant chat" }).waitFor();
      // Another origin in `next` is not followed.
      await p.getByRole("button", { name: /account menu/i }).click();
      await p.getByRole("menuitem", { name: "Sign out" }).click();
      // Signed out once the app says so: a page loaded while the sign-out is still on its way
      // restores the session it is ending, and its next call is refused (a 401 in the console).
      await p.waitForURL((url) => url.pathname === "/signin");
      await p.goto(`${base}/signin?next=//evil.example/x`);
      await fillSignIn(p);
      await p.waitForURL((url) => url.pathname === "/projects");
      expect(new URL(p.url()).origin).toBe(base);
      expect(visitor.errors, visitor.failures.join("\n")).toEqual([]);
    } finally {
      await visitor.context.close();
    }
  });

  it("takes no input on the old screen while the next one loads: nothing typed lands in the wrong chat", async () => {
    if (!browser) throw new Error("no browser");
    // A fresh context: the chat screen's script is not cached, and the test holds it back a while.
    const visitor = await openContext(browser, VIEWPORTS.desktop, "light");
    try {
      const p = visitor.page;
      await p.goto(`${base}/signin`);
      await fillSignIn(p);
      await p.waitForURL((url) => url.pathname === "/projects");
      await p.goto(`${base}/projects/${projectId}`);
      const preview = p.getByRole("region", { name: "Onboarding preview chat" });
      const previewBox = preview.getByRole("textbox", { name: "Message" });
      await previewBox.waitFor();
      const previewMessages = async () => {
        const res = await p.request.get(
          `${base}/agents/onboarding-agent/${projectId}/get-messages`,
          {
            headers: { authorization: `Bearer ${await accessToken()}` },
          },
        );
        return ((await res.json()) as unknown[]).length;
      };
      const before = await previewMessages();
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      await p.route(/\/assets\/session-page-[^/]*\.js$/, async (route) => {
        await held;
        await route.continue();
      });
      await p.getByRole("button", { name: "New chat" }).click();
      await p.waitForURL(/\/sessions\//);
      // The project page is still on screen, but it takes no input while the chat loads.
      expect(await p.locator("main").evaluate((main) => (main as HTMLElement).inert)).toBe(true);
      await previewBox.focus().catch(() => undefined);
      await p.keyboard.type("Meant for the new chat");
      await p.keyboard.press("Enter");
      release();
      const chat = p.getByRole("region", { name: "Assistant chat" });
      await chat.getByRole("textbox", { name: "Message" }).waitFor();
      expect(await p.locator("main").evaluate((main) => (main as HTMLElement).inert)).toBe(false);
      expect(await previewMessages()).toBe(before);
    } finally {
      await visitor.context.close();
    }
  });

  it("serves a real favicon", async () => {
    const icon = await page.request.get(`${base}/favicon.ico`);
    expect(icon.status()).toBe(200);
    expect(icon.headers()["content-type"]).toMatch(/^image\//);
  });

  it("logs nothing in the console for a signed-out visit, and makes no refresh that must fail", async () => {
    if (!browser) throw new Error("no browser");
    const visitor = await openContext(browser, VIEWPORTS.desktop, "light");
    const asked: string[] = [];
    visitor.page.on("request", (request) => {
      const path = new URL(request.url()).pathname;
      if (path.startsWith("/api/") || path.startsWith("/agents/")) asked.push(path);
    });
    // The home page, and a chat's address (its screen preloads the chat when signed in).
    for (const path of ["/", "/sessions/ses_01j00000000000000000000000"]) {
      await visitor.page.goto(`${base}${path}`);
      await visitor.page.waitForURL((url) => url.pathname === "/signin");
      await visitor.page.getByRole("heading", { level: 1, name: "Sign in to Parley" }).waitFor();
      await visitor.page.waitForLoadState("networkidle");
    }
    expect(visitor.errors).toEqual([]);
    expect(asked).toEqual([]);
    expect(await visitor.page.title()).toBe("Sign in · Parley");
    await visitor.context.close();
  });

  it("says the account is being erased after deleting it, on the sign-in page", async () => {
    if (!browser) throw new Error("no browser");
    const leaver = await openContext(browser, VIEWPORTS.desktop, "light");
    const email = freshEmail("leaver");
    await signUp(leaver.page, base, { name: "Lee Ver", email });
    await leaver.page.getByRole("button", { name: "Account menu" }).click();
    await leaver.page.getByRole("menuitem", { name: "Account" }).click();
    await leaver.page.getByRole("button", { name: "Delete my account" }).click();
    const dialog = leaver.page.getByRole("alertdialog");
    const confirm = dialog.getByRole("button", { name: "Delete my account permanently" });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByRole("textbox").fill(email);
    await confirm.click();
    await leaver.page.waitForURL((url) => url.pathname === "/signin");
    await leaver.page.getByText(/Your account is being erased/).waitFor();
    expect(leaver.errors).toEqual([]);
    await leaver.context.close();
  });

  it("gives a demoted admin the member's view at the next navigation, without a 403 or a reload", async () => {
    if (!browser) throw new Error("no browser");
    const bob = await openContext(browser, VIEWPORTS.desktop, "light");
    const bobEmail = freshEmail("bob");
    await signUp(bob.page, base, { name: "Bob Bobson", email: bobEmail });

    // The owner adds Bob as an admin: Bob has an account, and still joins only through the link.
    await page.goto(`${base}/members`);
    const add = page.getByRole("form", { name: "Add a member" });
    await add.getByLabel("Email").fill(bobEmail);
    await add.getByLabel("Role").selectOption("admin");
    await add.getByRole("button", { name: "Add member" }).click();
    const link = await add.getByLabel("Invitation link").inputValue();
    expect(await page.getByRole("combobox", { name: "Role of Bob Bobson" }).count()).toBe(0);
    await bob.page.goto(link);
    await submitSignUp(bob.page, bob.page.getByRole("button", { name: /^Join / }), bob.errors);
    await page.reload();
    await page.getByRole("combobox", { name: "Role of Bob Bobson" }).waitFor();

    // Bob switches to the owner's org and sees the admin screens.
    await bob.page.reload();
    await bob.page.getByRole("button", { name: /^Organization: / }).click();
    await bob.page.getByRole("menuitem", { name: /Trajectory Analysis/ }).click();
    const bobNav = bob.page.getByRole("navigation", { name: "Main" });
    await bobNav.getByRole("link", { name: "Data & privacy" }).waitFor();

    // Bob's chat in the owner's project is his: the owner's "Your chats" does not list it.
    await bob.page.goto(`${base}/projects/${projectId}`);
    await bob.page.getByRole("button", { name: "New chat" }).click();
    await bob.page.waitForURL(/\/sessions\//);
    await bob.page.getByRole("heading", { level: 1, name: "Untitled session" }).waitFor();
    await bob.page.getByRole("textbox", { name: "Message" }).fill("Bob's private question");
    await bob.page.getByRole("textbox", { name: "Message" }).press("Enter");
    await bob.page.getByRole("heading", { level: 1, name: "Bob's private question" }).waitFor();
    await page.goto(`${base}/projects/${projectId}`);
    const yours = page.getByRole("region", { name: "Your chats" });
    await yours.getByRole("link").first().or(yours.getByText("No chats yet.")).waitFor();
    expect(await yours.textContent()).not.toContain("Bob's private question");
    await page.goto(`${base}/members`);

    // Demoted while he is on a page: his next navigation shows the member's view.
    await page.getByRole("combobox", { name: "Role of Bob Bobson" }).selectOption("member");
    // Asked first (2026-12-06: any change of someone's role applies at once). Waited for until
    // the API has changed it: the select shows the new role while the change is still on its way,
    // and Bob's next navigation reads his role from the API.
    await clickAndAwaitApi(
      page,
      page
        .getByRole("alertdialog", { name: "Make Bob Bobson a member?" })
        .getByRole("button", { name: "Change role" }),
      "PATCH",
      /^\/api\/orgs\/[^/]+\/members\/[^/]+$/,
    );
    await expect
      .poll(() => page.getByRole("combobox", { name: "Role of Bob Bobson" }).inputValue())
      .toBe("member");
    await bobNav.getByRole("link", { name: "Billing" }).click();
    await bob.page.waitForURL((url) => url.pathname === "/billing");
    await expect.poll(() => bobNav.getByRole("link", { name: "Data & privacy" }).count()).toBe(0);
    await bob.page.goto(`${base}/admin`);
    await bob.page.getByText("Only owners and admins can file erasure requests").waitFor();
    expect(await bob.page.getByRole("form", { name: "File an erasure request" }).count()).toBe(0);
    // A member sees the people, not the controls they cannot use.
    await bob.page.goto(`${base}/members`);
    await bob.page.getByRole("heading", { level: 1, name: /^Members/ }).waitFor();
    expect(await bob.page.getByRole("form", { name: "Add a member" }).count()).toBe(0);
    expect(await bob.page.getByRole("button", { name: /^Remove / }).count()).toBe(0);
    // Leaving asks first.
    await bob.page.getByRole("button", { name: "Leave" }).click();
    await bob.page.getByRole("alertdialog").getByRole("button", { name: "Cancel" }).click();
    // The demotion bumped his token version: the next call with the old access token is refused
    // (401, which Chromium logs as a failed load) and the client refreshes once. Nothing else.
    expect(bob.errors.filter((line) => !/status of 401/.test(line))).toEqual([]);

    // Removing him asks first too, naming him; Cancel keeps him.
    await page.getByRole("button", { name: "Remove Bob Bobson" }).click();
    const dialog = page.getByRole("alertdialog");
    await dialog
      .getByText(/Remove Bob Bobson from/)
      .first()
      .waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    expect(await page.getByRole("button", { name: "Remove Bob Bobson" }).count()).toBe(1);
    await page.getByRole("button", { name: "Remove Bob Bobson" }).click();
    await page.getByRole("alertdialog").getByRole("button", { name: "Remove member" }).click();
    await expect
      .poll(() => page.getByRole("button", { name: "Remove Bob Bobson" }).count())
      .toBe(0);
    await bob.context.close();
  });

  it("invites someone with no account by link: they sign up through it and join with the role", async () => {
    if (!browser) throw new Error("no browser");
    const email = freshEmail("cleo");
    await page.goto(`${base}/members`);
    const add = page.getByRole("form", { name: "Add a member" });
    await add.getByLabel("Email").fill(email);
    await add.getByLabel("Role").selectOption("admin");
    await add.getByRole("button", { name: "Add member" }).click();
    const link = await add.getByLabel("Invitation link").inputValue();
    // The secret is in the fragment, which the browser never sends: no request log keeps it.
    expect(link).toMatch(/\/invite#inv_/);
    const secret = new URL(link).hash.slice(1);
    await page.getByRole("region", { name: "Pending invitations" }).getByText(email).waitFor();

    const cleo = await openContext(browser, VIEWPORTS.desktop, "dark");
    await cleo.page.goto(link);
    await cleo.page.getByText(/on Parley as admin/).waitFor();
    // The sign-up is on the invitation, the email already in (issue 28): one click joins.
    await cleo.page.getByLabel("Name", { exact: true }).fill("Cleo Clerk");
    await cleo.page.getByLabel("Password").fill("correct horse battery");
    await submitSignUp(cleo.page, cleo.page.getByRole("button", { name: /^Join / }), cleo.errors);
    await expect
      .poll(async () => (await cleo.page.locator("header").textContent()) ?? "")
      .toContain("Trajectory Analysis");
    expect(cleo.errors).toEqual([]);
    await cleo.context.close();
    // Reading, signing up through and accepting the link left its secret in no request log
    // (the log does list each request: the accept is in it, once wrangler has printed it).
    await expect.poll(() => stack?.log()).toContain("/api/invitations/accept");
    expect(stack?.log()).not.toContain(secret.slice(4));

    // The owner sees Cleo among the members, as an admin, and no longer as pending.
    await page.reload();
    const role = page.getByRole("combobox", { name: "Role of Cleo Clerk" });
    await role.waitFor();
    expect(await role.inputValue()).toBe("admin");
    expect(await page.getByRole("region", { name: "Pending invitations" }).count()).toBe(0);
  });

  it("logged nothing as an error in the owner's whole visit", () => {
    expect({ errors, failures }).toEqual({ errors: [], failures: [] });
  });
});
