import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type DevStack, startDevStack } from "../../../scripts/lib/dev-stack.mjs";
import {
  axeProblems,
  freshEmail,
  launchChromium,
  openContext,
  repliesEnded,
  sidewaysOverflow,
  signUp,
  VIEWPORTS,
  verifyEmailFromMailbox,
} from "./browser.ts";

/**
 * The developers' area (issue 32.1) in Chromium against the stack as `pnpm dev` starts it: an
 * owner creates an app and an API key on screen, copies the generated script-tag snippet and
 * pastes it into a blank page served on another port by a tiny server of this test, which mints
 * its visitor's end-user token server-side with that key (as examples/host-app does); an end user
 * chats there. At 1366 and 390 px, with nothing sideways and nothing axe calls serious.
 */
let stack: DevStack | undefined;
let browser: Browser | undefined;
let tenant: Server | undefined;
/** The tenant's page: `http://localhost:<port>`, another origin than Parley's. */
let tenantOrigin = "";
/** What the tenant's page holds: the snippet the owner pasted, and the key its server keeps. */
const pasted = { snippet: "", apiKey: "", appId: "" };

afterEach(async (context) => {
  if (context.task.result?.state === "fail") console.log(stack?.log().slice(-3000));
});

/**
 * A blank page with the snippet pasted into its body, and the one endpoint the snippet's
 * `token-url` asks: an end-user token for this page's visitor, minted with the org's API key
 * (never sent to the browser), answering only this page's own origin.
 */
function startTenant(): Promise<Server> {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", tenantOrigin);
    if (req.method === "GET" && url.pathname === "/") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      return res.end(
        `<!doctype html><html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>A tenant's page</title></head><body><main><h1>A tenant's page</h1></main>
        ${pasted.snippet}</body></html>`,
      );
    }
    if (req.method === "POST" && url.pathname === "/parley-token") {
      if (req.headers.origin !== tenantOrigin) return res.writeHead(403).end();
      const minted = await fetch(`${stack?.base}/api/apps/${pasted.appId}/end-user-tokens`, {
        method: "POST",
        headers: { authorization: `Bearer ${pasted.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ sub: "tenant-user-1", name: "Tenant User" }),
      });
      const body = (await minted.json()) as { accessToken: string; expiresIn: number };
      res.writeHead(minted.status === 201 ? 200 : 502, { "content-type": "application/json" });
      return res.end(JSON.stringify({ accessToken: body.accessToken, expiresIn: body.expiresIn }));
    }
    if (url.pathname === "/favicon.ico") return res.writeHead(204).end();
    res.writeHead(404).end();
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

beforeAll(async () => {
  const starting = startDevStack({ timeoutMs: 150_000 });
  browser = await launchChromium();
  tenant = await startTenant();
  tenantOrigin = `http://localhost:${(tenant.address() as AddressInfo).port}`;
  stack = await starting;
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => tenant?.close(resolve));
  await stack?.stop();
});

/** Nothing sideways, nothing axe calls serious, on the screen as it is now. */
async function screenIsClean(page: Page, label: string): Promise<void> {
  expect(await sidewaysOverflow(page), `${label}: sideways`).toBe(0);
  expect(await axeProblems(page, label)).toEqual([]);
}

describe("the developers' area", () => {
  const owner = { name: "Dev Owner", email: freshEmail("devowner"), org: "Tenant Co" };
  let appUrl = "";

  it("an owner creates an app and an API key on screen and copies the script-tag snippet (1366 px)", async () => {
    if (!browser || !stack) throw new Error("no stack");
    const { context, page, errors } = await openContext(browser, VIEWPORTS.desktop, "light");
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: stack.base });
    await signUp(page, stack.base, owner);
    // The sign-up grant pays the end users' chats: the address is confirmed from the mailbox.
    await verifyEmailFromMailbox(page, stack.mailbox, owner.email);
    await page.goto(`${stack.base}/projects`);
    // A project for the app's end users to chat in.
    const newProject = page.getByRole("form", { name: "New project" });
    await newProject.getByLabel("Name").fill("Support");
    await newProject.getByRole("button", { name: "Create project" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/projects/"));

    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Developers" })
      .click();
    await page.getByRole("heading", { name: `Developers in ${owner.org}` }).waitFor();
    await page.getByText("No apps yet").waitFor();
    await screenIsClean(page, "developers, desktop");

    // A new app: the form refuses what the API refuses, in place, before sending.
    await page.getByRole("button", { name: "New app" }).click();
    const dialog = page.getByRole("dialog", { name: "New app" });
    await dialog.getByLabel("Name").fill("Tenant Site");
    await dialog.getByLabel("Allowed origins").fill(`${tenantOrigin}/`);
    await dialog.getByRole("checkbox", { name: "Support" }).check();
    await dialog.getByLabel("Issuer (iss)").fill(tenantOrigin);
    await dialog.getByRole("button", { name: "Create app" }).click();
    await dialog
      .getByText(`Line 1: must be only scheme, host and port`, { exact: false })
      .waitFor();
    await screenIsClean(page, "new app refused, desktop");
    await dialog.getByLabel("Allowed origins").fill(tenantOrigin);
    await dialog.getByRole("button", { name: "Create app" }).click();
    const ready = page.getByRole("dialog", { name: "Tenant Site is ready" });
    await ready.getByText(/^prly_as_/).waitFor();
    await ready.getByRole("link", { name: "Open Tenant Site" }).click();
    await page.getByRole("heading", { name: "Tenant Site" }).waitFor();
    appUrl = page.url();

    // An API key for the tenant's server, shown once.
    await page.goto(`${stack.base}/developers#keys`);
    await page.getByRole("button", { name: "New API key" }).click();
    const keyDialog = page.getByRole("dialog", { name: "New API key" });
    await keyDialog.getByLabel("Name").fill("Tenant server");
    await keyDialog.getByRole("button", { name: "Create key" }).click();
    const secret = page.getByRole("dialog", { name: "Your new API key" }).getByText(/^prly_sk_/);
    pasted.apiKey = (await secret.textContent()) ?? "";
    expect(pasted.apiKey).toMatch(/^prly_sk_/);
    await screenIsClean(page, "API key shown once, desktop");
    await page.keyboard.press("Escape");
    await page.getByRole("table").getByText("Never").waitFor();

    // The snippet, copied with its button from the app's page.
    await page.goto(appUrl);
    await page.getByRole("button", { name: "Copy snippet" }).click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    pasted.snippet = await page.evaluate(() => navigator.clipboard.readText());
    expect(pasted.snippet).toContain(`${stack.base}/embed/parley-assistant.js`);
    pasted.appId = /app-id="([^"]+)"/.exec(pasted.snippet)?.[1] ?? "";
    expect(appUrl).toContain(pasted.appId);
    await screenIsClean(page, "app page, desktop");
    expect(errors).toEqual([]);
    await context.close();
  });

  it("an end user chats on the tenant's page, another origin, through the pasted snippet (1366 and 390 px)", async () => {
    if (!browser || !stack) throw new Error("no stack");
    for (const viewport of [VIEWPORTS.desktop, VIEWPORTS.phone]) {
      const { context, page, errors, replyEnds } = await openContext(browser, viewport, "light");
      await page.goto(tenantOrigin);
      const assistant = page.locator("parley-assistant");
      await assistant.getByRole("button", { name: "Open assistant" }).click();
      await assistant.getByRole("dialog", { name: "Tenant Site" }).waitFor();
      const question = `Hello from ${viewport.width} px`;
      const box = page.getByRole("textbox", { name: "Message" });
      const before = replyEnds();
      await box.fill(question);
      await box.press("Enter");
      await assistant.getByText(`Dev model reply to: ${question}`).waitFor();
      await repliesEnded(replyEnds, before);
      await assistant.getByRole("button", { name: "Send" }).waitFor();
      await screenIsClean(page, `tenant page, ${viewport.width} px`);
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  it("the owner sees the end user's usage, previews the assistant and it all holds at 390 px", async () => {
    if (!browser || !stack) throw new Error("no stack");
    for (const viewport of [VIEWPORTS.desktop, VIEWPORTS.phone]) {
      const { context, page, errors, replyEnds } = await openContext(browser, viewport, "light");
      await page.goto(`${stack.base}/signin`);
      await page.getByLabel("Email").fill(owner.email);
      await page.getByLabel("Password").fill("correct horse battery");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL((url) => url.pathname === "/projects");
      await page.goto(`${stack.base}/developers`);
      await page.getByRole("link", { name: /Tenant Site/ }).click();
      await page.getByRole("heading", { name: "Tenant Site" }).waitFor();
      // The end user, with their two calls (one per viewport above): a table row on a wide
      // screen, a card of labelled figures on a phone (money stays on screen at 390 px).
      const calls =
        viewport === VIEWPORTS.phone
          ? page
              .getByRole("list", { name: "End users of this app" })
              .getByRole("listitem")
              .filter({ hasText: "Tenant User" })
              .locator("dt", { hasText: /^Calls$/ })
              .locator("xpath=following-sibling::dd[1]")
          : page
              .getByRole("table")
              .filter({ hasText: "tenant-user-1" })
              .getByRole("row")
              .filter({ hasText: "Tenant User" })
              .getByRole("cell")
              .nth(2);
      // The end users' chats report their calls to the org's account when a read asks, and a read
      // waits for that at most 2 s: on a loaded machine the page's one read can miss the last
      // call. Each look is a fresh load of the page.
      await expect
        .poll(
          async () => {
            await page.reload();
            await page.getByRole("heading", { name: "Tenant Site" }).waitFor();
            await calls.waitFor();
            return (await calls.textContent()) ?? "";
          },
          { timeout: 60_000, interval: 1_000 },
        )
        .toBe("2");
      await screenIsClean(page, `app page, ${viewport.width} px`);
      if (viewport === VIEWPORTS.phone) {
        // The preview's end user (a long `parley:preview:` id) is listed too: still nothing sideways.
        await page
          .getByText(/^parley:preview:/)
          .first()
          .waitFor();
        await screenIsClean(page, "app page with the preview's end user, 390 px");
        // The API keys tab with the key made above: its table scrolls in its own box, not the page.
        await page.goto(`${stack.base}/developers#keys`);
        await page.getByRole("table").getByText("Tenant server").waitFor();
        await screenIsClean(page, "API keys with a key, 390 px");
      }
      if (viewport === VIEWPORTS.desktop) {
        // The live preview: the real assistant, inline, from Parley's own page.
        await page.getByRole("button", { name: "Start the preview" }).click();
        const preview = page.locator("parley-assistant");
        const box = preview.getByRole("textbox", { name: "Message" });
        const before = replyEnds();
        await box.fill("Preview question");
        await box.press("Enter");
        await preview.getByText("Dev model reply to: Preview question").waitFor();
        await repliesEnded(replyEnds, before);
        await screenIsClean(page, "app page with the preview, desktop");
      }
      expect(errors).toEqual([]);
      await context.close();
    }
  });
});
