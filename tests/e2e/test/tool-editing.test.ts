import { readFileSync } from "node:fs";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type DevStack, startDevStack } from "../../../scripts/lib/dev-stack.mjs";
import {
  axeProblems,
  launchChromium,
  openContext,
  sidewaysOverflow,
  VIEWPORTS,
} from "./browser.ts";

/**
 * Editing a tool source and reading a chat's tool calls (issue 30's web gaps), in Chromium against
 * `pnpm dev --example`: the shop's owner edits an HTTP source of their org (its price, one action,
 * its credential replaced, never shown back), then chats in the shop's project, whose default profile
 * switches on the shop's MCP tools, and finds the call in the chat's "Tool calls" list, at 1366
 * and 390 px, axe clean.
 */
let stack: DevStack | undefined;
let browser: Browser | undefined;
let shop = "";
let state: {
  owner: { email: string; password: string };
  orgId: string;
  projectId: string;
  profileId: string;
} = { owner: { email: "", password: "" }, orgId: "", projectId: "", profileId: "" };

afterEach(async (context) => {
  if (context.task.result?.state === "fail") console.log(stack?.log().slice(-3000));
});

/** The owner's API, from Node (a sign-in of its own). */
async function ownerApi<T>(method: string, path: string, body?: unknown): Promise<T> {
  const base = stack?.base ?? "";
  const login = await fetch(`${base}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: base },
    body: JSON.stringify(state.owner),
  });
  const { accessToken } = (await login.json()) as { accessToken: string };
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${accessToken}`,
      origin: base,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

beforeAll(async () => {
  const starting = startDevStack({ timeoutMs: 150_000, example: true });
  browser = await launchChromium();
  stack = await starting;
  shop = stack.exampleBase ?? "";
  state = JSON.parse(readFileSync(stack.exampleState ?? "", "utf8"));
  // The owner's own chats in the shop's project run the shop's profile (its two tools).
  await ownerApi("PATCH", `/api/projects/${state.projectId}`, {
    defaultProfileId: state.profileId,
  });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

async function signIn(page: Page): Promise<void> {
  await page.goto(`${stack?.base}/signin`);
  await page.getByLabel("Email").fill(state.owner.email);
  await page.getByLabel("Password").fill(state.owner.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === "/projects");
}

const press = (locator: Locator, phone: boolean) => (phone ? locator.tap() : locator.click());

describe("editing a tool source, and a chat's tool calls", () => {
  for (const [label, viewport] of [
    ["desktop", VIEWPORTS.desktop],
    ["phone", VIEWPORTS.phone],
  ] as const) {
    it(`the owner changes a source's price, an action and its credential, then reads a chat's tool calls (${label})`, async () => {
      if (!browser || !stack) throw new Error("no stack");
      const phone = label === "phone";
      const name = `Shop actions ${label}`;
      const source = await ownerApi<{ id: string; version: number }>(
        "POST",
        `/api/orgs/${state.orgId}/tool-sources`,
        {
          kind: "http",
          name,
          url: `${shop}/api`,
          credential: { header: "X-Shop-Key", value: `first-secret-${label}` },
          actions: [
            {
              name: "order_lookup",
              description: "An order by its number",
              method: "GET",
              path: "/orders/{orderId}",
              inputSchema: {
                type: "object",
                properties: { orderId: { type: "string" } },
                required: ["orderId"],
              },
              access: "read",
            },
          ],
        },
      );
      const opened = await openContext(browser, viewport, "light");
      const page = opened.page;
      await signIn(page);
      await page.goto(`${stack.base}/assistants#tools`);
      const card = page.getByRole("region", { name });
      await card.getByText("Credential set (X-Shop-Key)").waitFor();

      await press(card.getByRole("button", { name: `Edit ${name}` }), phone);
      const dialog = page.getByRole("dialog", { name: `Edit ${name}` });
      await dialog
        .getByText("Set: sent as the X-Shop-Key header. Its value is never shown.")
        .waitFor();
      await dialog.getByLabel(/^Price per call/).fill("0.02");
      const action = dialog.getByRole("group", { name: "Action 1: order_lookup" });
      await action.getByLabel(/^Path/).fill("/v2/orders/{orderId}");
      await action.getByLabel("Description").fill("Looks an order up by its number");
      await press(dialog.getByLabel("Replace it"), phone);
      // The header is kept as it was; the value field starts empty (no value ever comes back).
      expect(await dialog.getByLabel("Header").inputValue()).toBe("X-Shop-Key");
      expect(await dialog.getByLabel("New value").inputValue()).toBe("");
      await dialog.getByLabel("New value").fill(`shop-secret-${label}`);
      expect(await sidewaysOverflow(page)).toBe(0);
      expect(await axeProblems(page, `source editor, ${label}`)).toEqual([]);
      await press(dialog.getByRole("button", { name: "Save" }), phone);
      await dialog.waitFor({ state: "detached" });

      // The card shows what was saved; the credential only as "set", its value nowhere.
      await card.getByText("$0.02 a call").waitFor();
      await card.getByText("Credential set (X-Shop-Key)").waitFor();
      await card.getByText("GET /v2/orders/{orderId}").waitFor();
      expect(await page.content()).not.toContain(`shop-secret-${label}`);
      expect(await page.content()).not.toContain(`first-secret-${label}`);
      const saved = await ownerApi<{
        version: number;
        priceMicros: number;
        credential: { header: string } | null;
        tools: { path: string; description: string }[];
      }>("GET", `/api/tool-sources/${source.id}`);
      expect(saved.priceMicros).toBe(20_000);
      // One PATCH, and the credential's change moved the version (calls under the old one refused).
      expect(saved.version).toBe(source.version + 1);
      expect(saved.credential).toEqual({ header: "X-Shop-Key" });
      expect(saved.tools.map((tool) => [tool.path, tool.description])).toEqual([
        ["/v2/orders/{orderId}", "Looks an order up by its number"],
      ]);

      // A chat in the shop's project, a tool turn, then its tool calls from the chat's header.
      const session = await ownerApi<{ id: string }>(
        "POST",
        `/api/projects/${state.projectId}/sessions`,
        {},
      );
      await page.goto(`${stack.base}/sessions/${session.id}`);
      const box = page.getByRole("textbox", { name: "Message" });
      await box.fill('Where is order 1001? [[tool:order_status {"orderId":"1001"}]]');
      await box.press("Enter");
      const chat = page.getByRole("region", { name: "Assistant chat" });
      await expect
        .poll(
          () =>
            chat.locator('[data-state="output-available"], [data-state="output-error"]').count(),
          {
            timeout: 30_000,
          },
        )
        .toBe(1);
      await press(page.getByRole("button", { name: "Tool calls" }), phone);
      const calls = page.getByRole("dialog", { name: "Tool calls" });
      const call = calls.getByRole("listitem").filter({ hasText: "order_status" });
      // The record lands a moment after the call (the list reads again while open).
      await call.waitFor({ timeout: 20_000 });
      // Polled, not read once: a read while the org's lists load would not be the list's answer.
      await expect.poll(() => call.textContent()).toContain("from Acme Shop orders");
      expect(await call.textContent()).toMatch(/\d+ ms|\d+\.\d s/);
      expect(await call.textContent()).toContain("free");
      expect(await sidewaysOverflow(page)).toBe(0);
      expect(await axeProblems(page, `tool calls, ${label}`)).toEqual([]);
      expect(opened.errors).toEqual([]);
      await opened.context.close();
    }, 150_000);
  }
});
