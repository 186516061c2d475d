import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type DevStack, startDevStack } from "../../../scripts/lib/dev-stack.mjs";
import {
  axeProblems,
  launchChromium,
  openContext,
  repliesEnded,
  sidewaysOverflow,
  VIEWPORTS,
} from "./browser.ts";

/**
 * Knowledge in Chromium (issue 31) against `pnpm dev --example`: the owner uploads a document on
 * the project's Documents page and watches it indexed, asks about it in a session and opens the
 * cited passage; then an end user of the example shop asks the same through the embed and opens
 * the same passage, at 1366 and 390 px, with nothing axe calls serious.
 */
let stack: DevStack | undefined;
let browser: Browser | undefined;
let shop = "";
let state = { owner: { email: "", password: "" }, orgId: "", projectId: "", profileId: "" };

const POLICY = [
  "# Acme Shop policies",
  "",
  "## Returns",
  "",
  "Unworn items may be returned within 45 days with the receipt; refunds reach the card in five working days.",
  "",
  "## Shipping",
  "",
  "Parcels leave the warehouse every Tuesday by courier.",
  "",
].join("\n");
const QUESTION = "How many days do I have to return unworn items?";
const PASSAGE = "Unworn items may be returned within 45 days with the receipt";
/** The dev model answers with the question's first five words (packages/dev-model's README). */
const REPLY = "Dev model reply to: How many days do I";

afterEach(async (context) => {
  if (context.task.result?.state === "fail") console.log(stack?.log().slice(-3000));
});

beforeAll(async () => {
  const starting = startDevStack({ timeoutMs: 150_000, example: true });
  browser = await launchChromium();
  stack = await starting;
  shop = stack.exampleBase ?? "";
  state = JSON.parse(readFileSync(stack.exampleState ?? "", "utf8"));
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** The owner's API call (what an admin does in the profile editor, done directly). */
async function asOwner(method: string, route: string, body?: unknown): Promise<unknown> {
  const base = stack?.base ?? "";
  const login = await fetch(`${base}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(state.owner),
  });
  const { accessToken } = (await login.json()) as { accessToken: string };
  const response = await fetch(`${base}${route}`, {
    method,
    headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(`${method} ${route}: ${JSON.stringify(answer)}`);
  return answer;
}

/** Opens the reply's first source and checks the passage dialog; closes it again. */
async function openCitedPassage(scope: Locator | Page, label: string, page: Page) {
  const sources = scope.getByRole("list", { name: "Sources" }).last();
  const source = sources.getByRole("button", {
    name: /policies\.md › Acme Shop policies › Returns/,
  });
  await source.click();
  const dialog = scope.getByRole("dialog", { name: "policies.md" });
  await dialog.waitFor();
  await dialog.getByText(/Version 1 · Acme Shop policies › Returns/).waitFor();
  await expect
    .poll(async () => (await dialog.getByTestId("source-passage").textContent()) ?? "")
    .toContain(`${PASSAGE}; refunds reach the card in five working days.`);
  expect(await dialog.locator("mark").count()).toBe(1);
  expect(await sidewaysOverflow(page)).toBe(0);
  expect(await axeProblems(page, `${label}, passage open`)).toEqual([]);
  await page.keyboard.press("Escape");
  await dialog.waitFor({ state: "hidden" });
}

describe("knowledge in the app and the embed", () => {
  it("the owner uploads a document, watches it indexed, asks about it and opens the cited passage", async () => {
    if (!browser || !stack) throw new Error("no stack");
    // The project's default profile searches its documents before each reply (an admin's
    // choice in the profile editor; the editor's own tests cover that screen).
    const profile = (await asOwner("POST", `/api/orgs/${state.orgId}/profiles`, {
      name: "Shop helpdesk",
      tools: ["search_knowledge"],
      knowledgeRetrieval: true,
    })) as { id: string };
    await asOwner("PATCH", `/api/projects/${state.projectId}`, { defaultProfileId: profile.id });

    const { context, page, errors, replyEnds } = await openContext(
      browser,
      VIEWPORTS.desktop,
      "light",
    );
    await page.goto(`${stack.base}/signin`);
    await page.getByLabel("Email").fill(state.owner.email);
    await page.getByLabel("Password").fill(state.owner.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === "/projects");
    await page.goto(`${stack.base}/projects/${state.projectId}`);
    await page.getByRole("link", { name: "Open documents" }).click();
    await page.getByRole("heading", { name: "Documents", level: 1 }).waitFor();
    await page.getByText("No documents yet.").waitFor();

    const dir = mkdtempSync(path.join(os.tmpdir(), "parley-knowledge-"));
    const file = path.join(dir, "policies.md");
    writeFileSync(file, POLICY);
    await page.getByTestId("upload-document").setInputFiles(file);
    const row = page.getByRole("listitem", { name: "policies.md" });
    await row.getByText("Ready: the assistant finds it").waitFor();
    await page
      .getByTestId("storage-meter")
      .getByText(/of 50 MB used/)
      .waitFor();
    expect(await axeProblems(page, "documents page, desktop")).toEqual([]);

    // A session in the project: the answer cites the document, and the source opens its passage.
    await page.getByRole("link", { name: "Shop assistant" }).click();
    await page.getByRole("button", { name: "New chat" }).first().click();
    await page.waitForURL((url) => url.pathname.startsWith("/sessions/"));
    const box = page.getByRole("textbox", { name: "Message" });
    const before = replyEnds();
    await box.fill(QUESTION);
    await box.press("Enter");
    await page.getByText(REPLY).waitFor();
    // Ended before the reload below, so what shows after it is the stored reply, not a resumed one.
    await repliesEnded(replyEnds, before);
    await openCitedPassage(page, "session, desktop", page);
    // The sources are stored with the reply: they are there after a reload.
    await page.reload();
    await page.getByRole("list", { name: "Sources" }).waitFor();
    expect(errors).toEqual([]);
    await context.close();

    // The documents page on a phone: nothing sideways, nothing serious for axe.
    const phone = await openContext(browser, VIEWPORTS.phone, "dark");
    await phone.page.goto(`${stack.base}/signin`);
    await phone.page.getByLabel("Email").fill(state.owner.email);
    await phone.page.getByLabel("Password").fill(state.owner.password);
    await phone.page.getByRole("button", { name: "Sign in" }).tap();
    await phone.page.waitForURL((url) => url.pathname === "/projects");
    await phone.page.goto(`${stack.base}/projects/${state.projectId}/documents`);
    await phone.page.getByRole("listitem", { name: "policies.md" }).waitFor();
    expect(await sidewaysOverflow(phone.page)).toBe(0);
    expect(await axeProblems(phone.page, "documents page, phone, dark")).toEqual([]);
    expect(phone.errors).toEqual([]);
    await phone.context.close();
  });

  it("an end user of the shop asks through the embed and opens the same passage, at 1366 and 390 px", async () => {
    if (!browser) throw new Error("no browser");
    // The shop's app runs a profile of its own (its order tools): its end users get the project's
    // documents when that profile switches knowledge on too, which the owner does here.
    const shopProfile = (await asOwner("GET", `/api/profiles/${state.profileId}`)) as {
      tools: string[];
    };
    await asOwner("PATCH", `/api/profiles/${state.profileId}`, {
      tools: [...shopProfile.tools, "search_knowledge"],
      knowledgeRetrieval: true,
    });
    for (const [viewport, who] of [
      [VIEWPORTS.desktop, "Grace Desk"],
      [VIEWPORTS.phone, "Ada Phone"],
    ] as const) {
      const opened = await openContext(browser, viewport, "light");
      const { page } = opened;
      await page.goto(shop);
      await page.getByLabel("Your name").fill(who);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByText(`signed in as ${who}`).waitFor();
      const assistant = page.locator("parley-assistant");
      await assistant.getByRole("button", { name: "Open assistant" }).click();
      await assistant.getByRole("dialog", { name: "Acme Shop" }).waitFor();
      const box = page.getByRole("textbox", { name: "Message" });
      const before = opened.replyEnds();
      await box.fill(QUESTION);
      await box.press("Enter");
      await assistant.getByText(REPLY).waitFor();
      await repliesEnded(opened.replyEnds, before);
      await assistant.getByRole("button", { name: "Send" }).waitFor();
      await openCitedPassage(assistant, `embed, ${viewport.width} px`, page);
      expect(await axeProblems(page, `embed, ${viewport.width} px`)).toEqual([]);
      expect(opened.errors).toEqual([]);
      await opened.context.close();
    }
  });
});
