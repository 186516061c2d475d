import path from "node:path";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type DevStack, startDevStack } from "../../../scripts/lib/dev-stack.mjs";
import {
  freshEmail,
  launchChromium,
  openContext,
  repliesEnded,
  signUpWithProject,
  VIEWPORTS,
} from "./browser.ts";

/**
 * Issue 29 in the browser, against the platform as `pnpm dev` starts it (the dev model's ids in
 * the catalogue): an owner allows a second model, writes an assistant profile (the API's refusal
 * of a control character said in the editor, versions, a diff, a confirmed rollback), makes it
 * the project's, picks a model in a chat (the session's model, through PATCH) and finds the call
 * in billing by model under a display name.
 *
 * The last case reads what the agents ran (issue 29.5 wires them to the resolver): the picked
 * model's and the profile's names on the reply, a reply cut to the profile's max output, and the
 * call in billing by model.
 */
const screenshots = path.resolve(import.meta.dirname, "../screenshots");
let stack: DevStack | undefined;
let browser: Browser | undefined;
let base = "";
let page: Page;
let errors: string[] = [];
/** How many chat replies the owner's page has seen end (browser.ts `countReplyEnds`). */
let replyEnds: () => number = () => 0;
let closeContext: () => Promise<void> = async () => undefined;
const owner = { name: "Hedy Lamarr", email: freshEmail("hedy"), org: "Frequency Hopping" };
let orgId = "";
let projectId = "";
let profileId = "";
let sessionId = "";

const chat = (): Locator => page.getByRole("region", { name: "Assistant chat" });
const replies = (): Locator =>
  chat()
    .getByRole("listitem")
    .filter({ has: page.getByText("Assistant said:") });
const instructions = (): Locator => page.getByLabel("Instructions", { exact: true });

/** A fresh access token for the owner, from the page's own refresh cookie. */
async function accessToken(): Promise<string> {
  const res = await page.request.post(`${base}/api/auth/refresh`, { headers: { origin: base } });
  return ((await res.json()) as { accessToken: string }).accessToken;
}

/** A GET as the owner (with `token`, or a fresh one: each refresh rotates the cookie). */
async function apiGet<T>(path: string, token?: string): Promise<T> {
  const res = await page.request.get(`${base}${path}`, {
    headers: { authorization: `Bearer ${token ?? (await accessToken())}` },
  });
  expect(res.status()).toBe(200);
  return (await res.json()) as T;
}

type Activity = { items: { model: string; modelLabel: string }[] };

/**
 * The org's billing activity once it lists the newest call. A chat reports its calls to the
 * account when a read asks, and a read waits for that at most 2 s: on a loaded machine one read
 * can miss the last call, so it is read again until the call is there.
 */
async function activityWithCall(): Promise<Activity> {
  const token = await accessToken();
  let activity: Activity = { items: [] };
  await expect
    .poll(
      async () => {
        activity = await apiGet<Activity>(`/api/orgs/${orgId}/billing/activity`, token);
        return activity.items.length;
      },
      { timeout: 30_000, interval: 500 },
    )
    .toBeGreaterThan(0);
  return activity;
}

beforeAll(async () => {
  const starting = startDevStack({ timeoutMs: 150_000 });
  browser = await launchChromium();
  stack = await starting;
  base = stack.base;
  const opened = await openContext(browser, VIEWPORTS.desktop, "light");
  page = opened.page;
  errors = opened.errors;
  replyEnds = opened.replyEnds;
  closeContext = () => opened.context.close();
  // The sign-up grant pays the chats below: the address is confirmed from the mailbox first.
  projectId = await signUpWithProject(page, stack, owner, "Radio guidance");
  orgId = (await apiGet<{ orgs: { id: string }[] }>("/api/me")).orgs[0]?.id ?? "";
}, 240_000);

afterEach(async (context) => {
  if (context.task.result?.state === "fail") console.log(stack?.log().slice(-2000));
});

afterAll(async () => {
  await closeContext().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await stack?.stop();
});

describe("assistants in the web app", () => {
  it("allows a second model in the org's settings, with its prices per million tokens", async () => {
    await page.getByRole("link", { name: "Assistants" }).click();
    await page.getByRole("tab", { name: "Models" }).click();
    const table = page.getByRole("table", { name: "Models and their prices per million tokens" });
    const fast = table.getByRole("row").filter({ hasText: "Parley Dev Fast" });
    // Input, output, cache read / write per million tokens, as the catalogue lists them.
    expect(await fast.textContent()).toMatch(/\$0\.12\$0\.48\$0\.03 \/ \$0\.15128K/);
    await page.getByRole("checkbox", { name: "Parley Dev Fast" }).check();
    await page.getByRole("checkbox", { name: "Parley Dev Model" }).check();
    await page.getByRole("button", { name: "Save allowed models" }).click();
    await page.getByText("Allowed models saved.").waitFor();
    const allowed = await apiGet<{ items: { id: string }[] }>(`/api/orgs/${orgId}/models`);
    expect(allowed.items.map((model) => model.id)).toEqual(
      expect.arrayContaining(["parley/dev", "parley/dev-fast"]),
    );
  });

  it("writes a profile: the API's refusal said at once, a save is a new version", async () => {
    await page.getByRole("tab", { name: "Profiles" }).click();
    await page.getByRole("button", { name: "New profile" }).click();
    const dialog = page.getByRole("dialog", { name: "New assistant profile" });
    await dialog.getByLabel("Name").fill("Radio support");
    await dialog.getByRole("combobox").click();
    await page.getByRole("option", { name: /^Parley Dev Model/ }).click();
    await dialog.getByRole("button", { name: "Create profile" }).click();
    await page.waitForURL(/\/assistants\/profiles\/[^/]+$/);
    profileId = new URL(page.url()).pathname.split("/")[3] ?? "";
    await page.getByRole("heading", { level: 1, name: "Radio support" }).waitFor();

    // A bell character pasted with the text: refused in the API's words before anything is sent.
    await instructions().fill("Answer as a radio engineer.\u0007\nKeep it short.");
    await page
      .getByText(/control characters other than tab and line feed \(found U\+0007\)/)
      .waitFor();
    await page.getByRole("button", { name: "Remove these characters" }).click();
    expect(await instructions().inputValue()).toBe("Answer as a radio engineer.\nKeep it short.");
    await page.getByLabel("Welcome message").fill("Hello! Ask me about frequencies.");
    await page.getByRole("button", { name: "Add a suggested prompt" }).click();
    await page
      .getByLabel("Suggested prompt 1", { exact: true })
      .fill("How does frequency hopping work?");
    await page.getByLabel("Max output tokens").fill("8");
    await page.getByRole("button", { name: "Save as version 2" }).click();
    await page.getByText("Saved as version 2.").waitFor();
    const versions = page.getByRole("list", { name: "Versions" });
    await versions.getByText("Version 2").waitFor();
    // The whole prompt shows the saved instructions inside Parley's frame.
    await page.locator("mark").filter({ hasText: "Answer as a radio engineer." }).waitFor();
  });

  it("compares a version with the current one and restores it after a confirmation", async () => {
    await page.getByRole("button", { name: "Compare version 1 with the current version" }).click();
    const diff = page.getByRole("dialog", { name: "Version 1 → version 2 (current)" });
    const lines = diff.getByRole("region", { name: /^Instructions:/ });
    expect(await lines.textContent()).toContain("Added: Answer as a radio engineer.");
    await diff.getByRole("button", { name: "Restore version 1" }).click();
    const confirm = page.getByRole("alertdialog", { name: "Restore version 1?" });
    await confirm.getByRole("button", { name: "Cancel" }).click();
    await confirm.waitFor({ state: "detached" });
    await page.keyboard.press("Escape");
    // Nothing was restored: still two versions.
    expect(await page.getByRole("list", { name: "Versions" }).getByRole("listitem").count()).toBe(
      2,
    );

    await page.getByRole("button", { name: "Restore version 1" }).click();
    await page
      .getByRole("alertdialog", { name: "Restore version 1?" })
      .getByRole("button", { name: "Restore version 1" })
      .click();
    await page.getByText("Restored version 1 as version 3.").waitFor();
    expect(await instructions().inputValue()).toBe("");
    // And back to the written one (version 2), so the chat below runs it: version 4.
    await page.getByRole("button", { name: "Restore version 2" }).click();
    await page
      .getByRole("alertdialog", { name: "Restore version 2?" })
      .getByRole("button", { name: "Restore version 2" })
      .click();
    await page.getByText("Restored version 2 as version 4.").waitFor();
    const current = await apiGet<{ version: number; maxOutputTokens: number | null }>(
      `/api/profiles/${profileId}`,
    );
    expect(current).toMatchObject({ version: 4, maxOutputTokens: 8 });
  });

  it("makes it the project's, and a new chat opens with its welcome and suggested prompt", async () => {
    await page.goto(`${base}/projects/${projectId}`);
    await page
      .getByLabel("Chats", { exact: true })
      .selectOption({ label: "Radio support · Parley Dev Model" });
    await page.getByText("Assistant saved: the next reply follows it.").waitFor();
    await page.getByRole("button", { name: "New chat" }).first().click();
    await page.waitForURL(/\/sessions\/[^/]+$/);
    sessionId = new URL(page.url()).pathname.split("/")[2] ?? "";
    await chat().getByText("Hello! Ask me about frequencies.").waitFor();
    await chat().getByRole("button", { name: "How does frequency hopping work?" }).waitFor();
  });

  it("picks a model for the chat from the allowed ones, with prices, and keeps it (PATCH)", async () => {
    const picker = page.getByRole("combobox", { name: "Model: Parley Dev Model" });
    await picker.click();
    const fast = page.getByRole("option", { name: /^Parley Dev Fast/ });
    expect(await fast.textContent()).toContain("$0.12 in · $0.48 out per 1M tokens");
    await page.screenshot({ path: path.join(screenshots, "14-chat-model-picker.png") });
    await fast.click();
    await page.getByText("Replies in this chat now use Parley Dev Fast.").waitFor();
    const session = await apiGet<{ model: string | null }>(`/api/sessions/${sessionId}`);
    expect(session.model).toBe("parley/dev-fast");
    await page.reload();
    await page.getByRole("combobox", { name: "Model: Parley Dev Fast" }).waitFor();
  });

  it("sends a suggested prompt, and billing by model names the call's model by its display name", async () => {
    const before = replyEnds();
    await chat().getByRole("button", { name: "How does frequency hopping work?" }).click();
    await repliesEnded(replyEnds, before);
    await page.getByRole("button", { name: "Send" }).waitFor();
    await replies().first().getByRole("button", { name: "Copy" }).waitFor();
    // The call is in the account before the billing page reads it (which it does once).
    const activity = await activityWithCall();
    await page.getByRole("link", { name: "Billing" }).click();
    await page.getByLabel("Group by").selectOption("model");
    const byModel = page.getByRole("table", { name: "Spend by model" });
    await byModel.waitFor();
    const call = activity.items[0];
    expect(call).toBeDefined();
    // The catalogue lists every model the dev stack serves: a display name, never the id.
    expect(call?.modelLabel).not.toBe(call?.model);
    await byModel
      .getByRole("cell", { name: call?.modelLabel ?? "?" })
      .first()
      .waitFor();
    expect(await byModel.textContent()).not.toContain(call?.model ?? "?");
    expect(errors).toEqual([]);
  });

  it("runs the reply on the picked model and the profile: named on the reply, cut to its max output, billed under it", async () => {
    await page.goto(`${base}/sessions/${sessionId}`);
    const reply = replies().first();
    await reply.getByText("Parley Dev Fast").waitFor();
    expect(await reply.textContent()).toContain("Radio support v4");
    // The profile's max output (8 tokens) cut the dev model's reply.
    const words = ((await reply.locator("p").first().textContent()) ?? "").trim().split(/\s+/);
    expect(words.length).toBeLessThanOrEqual(8);
    const activity = await activityWithCall();
    expect(activity.items[0]).toMatchObject({
      model: "parley/dev-fast",
      modelLabel: "Parley Dev Fast",
    });
  });
});
