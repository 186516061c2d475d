import { readFileSync } from "node:fs";
import type { Browser } from "playwright-core";
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
 * Tools from the tenant's own product (issue 30), in Chromium against `pnpm dev --example`: the
 * example shop's MCP server is a tool source of its org and the app's profile switches on its two
 * tools. A shopper in the shop's embed asks where an order is (a read: it runs at once, as them)
 * and then asks for a refund (a write: the chat shows the tool and its exact arguments, and it runs
 * only once they approve), at 1366 and 390 px, axe clean.
 */
let stack: DevStack | undefined;
let browser: Browser | undefined;
let shop = "";
let owner: { email: string; password: string } = { email: "", password: "" };

afterEach(async (context) => {
  if (context.task.result?.state === "fail") console.log(stack?.log().slice(-3000));
});

beforeAll(async () => {
  const starting = startDevStack({ timeoutMs: 150_000, example: true });
  browser = await launchChromium();
  stack = await starting;
  shop = stack.exampleBase ?? "";
  owner = JSON.parse(readFileSync(stack.exampleState ?? "", "utf8")).owner;
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** A refund's reason long enough to have been cut at 390 px (the outside probe's). */
const REASON =
  "Changed my mind, the size is wrong and I would like to return it for a refund to my card";

describe("the shop's tools in its embed", () => {
  for (const [label, viewport] of [
    ["desktop", VIEWPORTS.desktop],
    ["phone", VIEWPORTS.phone],
  ] as const) {
    it(`a shopper asks for an order's status, then approves a refund (${label})`, async () => {
      if (!browser) throw new Error("no browser");
      const opened = await openContext(browser, viewport, "light");
      const page = opened.page;
      await page.goto(shop);
      // A shopper of their own per viewport: each has the shop's two orders, no refund yet.
      await page.getByLabel("Your name").fill(`Alice ${label}`);
      await page.getByRole("button", { name: "Sign in" }).click();
      const assistant = page.locator("parley-assistant");
      const launcher = assistant.getByRole("button", { name: "Open assistant" });
      if (label === "phone") await launcher.tap();
      else await launcher.click();
      const dialog = assistant.getByRole("dialog", { name: "Acme Shop" });
      await dialog.waitFor();
      const box = page.getByRole("textbox", { name: "Message" });

      // The app's profile opens the chat as a member's chat opens with it: its welcome and its
      // suggested prompts (examples/host-app/setup.mjs), and a suggestion sends itself.
      await assistant.getByText("Hi! Ask me about your orders.").waitFor();
      const suggestions = assistant.getByRole("list", { name: "Suggested prompts" });
      await suggestions.getByRole("button", { name: "I'd like a refund for order 1002" }).waitFor();
      const suggestion = suggestions.getByRole("button", { name: "Where is order 1001?" });
      // Each message below goes once the reply before it has ended (its stream's last frame): a
      // message sent while a reply still streams is only kept back, and Send is no sign of the
      // end (it has been seen for a moment mid-stream on a loaded machine).
      const ended = opened.replyEnds();
      if (label === "phone") await suggestion.tap();
      else await suggestion.click();
      await assistant.getByText("Dev model reply to: Where is order 1001?").waitFor();
      await repliesEnded(opened.replyEnds, ended);
      await assistant.getByRole("button", { name: "Send" }).waitFor();

      // A read: it runs at once, and the reply reads its result.
      await box.fill('Where is order 1001? [[tool:order_status {"orderId":"1001"}]]');
      await box.press("Enter");
      await assistant.getByText("Dev model got tool result from order_status").waitFor();
      await assistant.getByText(/Tool call\s*order_status/).waitFor();
      await repliesEnded(opened.replyEnds, ended, 2);
      await assistant.getByRole("button", { name: "Send" }).waitFor();

      // A write: the card names the tool and the source that will act, and shows its exact
      // arguments; nothing ran yet. A long reason (the outside probe's card was cut at 390 px):
      // every word of it is readable.
      await box.fill(
        `It arrived broken, I want a refund. [[tool:request_refund {"orderId":"1001","reason":"${REASON}"}]]`,
      );
      await box.press("Enter");
      const card = assistant.getByRole("group", {
        name: "The assistant wants to run request_refund on Acme Shop orders.",
      });
      await card.waitFor();
      const shown = (await card.textContent()) ?? "";
      expect(shown).toContain('"orderId": "1001"');
      expect(shown).toContain(`"reason": "${REASON}"`);
      expect(await sidewaysOverflow(page)).toBe(0);
      // The card fits inside the panel (its right border inside the panel's), and nothing inside
      // the panel scrolls sideways: not the chat, not the arguments' box.
      const panelBox = await dialog.boundingBox();
      const cardBox = await card.boundingBox();
      if (!panelBox || !cardBox) throw new Error("no layout");
      expect(cardBox.x + cardBox.width).toBeLessThanOrEqual(panelBox.x + panelBox.width);
      expect(
        await card.locator("legend").evaluate((e) => e.getBoundingClientRect().right),
      ).toBeLessThanOrEqual(cardBox.x + cardBox.width);
      expect(
        await dialog.evaluate((panel) =>
          [panel, ...panel.querySelectorAll("*")]
            // Boxes that clip (overflow not visible) with more inside than they show; not the
            // 1 px screen-reader-only labels, which clip on purpose.
            .filter(
              (e) =>
                e.clientWidth > 1 &&
                e.scrollWidth > e.clientWidth + 1 &&
                getComputedStyle(e).overflowX !== "visible",
            )
            .map((e) => `${e.tagName}.${e.className}`),
        ),
      ).toEqual([]);
      expect(await axeProblems(page, `tools, approval card, ${label}`)).toEqual([]);

      const approve = card.getByRole("button", { name: "Approve" });
      if (label === "phone") await approve.tap();
      else await approve.click();
      // It ran once, as the shopper: the record says approved, the reply reads the refund. The
      // approval's reply ended when it asked; the approved call's continuation ends next.
      await assistant.getByText("Dev model got tool result from request_refund").waitFor();
      await repliesEnded(opened.replyEnds, ended, 4);
      // Both calls show as done on their cards (the read's and the approved write's).
      await expect.poll(() => assistant.locator('[data-state="output-available"]').count()).toBe(2);
      expect(await assistant.getByRole("button", { name: "Approve" }).count()).toBe(0);
      // The chat lists what the assistant did for them: both calls, the refund approved by them.
      const actions = assistant.getByTestId("actions-taken");
      await actions.getByText("Actions taken (2)").waitFor({ timeout: 15_000 });
      await actions.locator("summary").click();
      await actions
        .getByText(/request_refund \(Acme Shop orders\): done, approved by you/)
        .waitFor();
      await actions.getByText(/order_status \(Acme Shop orders\): done/).waitFor();
      expect(await sidewaysOverflow(page)).toBe(0);
      expect(await axeProblems(page, `tools, after the refund, ${label}`)).toEqual([]);
      // New chat opens with the profile's welcome and suggestions again.
      const newChat = dialog.getByRole("button", { name: "New chat" });
      if (label === "phone") await newChat.tap();
      else await newChat.click();
      await assistant.getByText("Hi! Ask me about your orders.").waitFor();
      await suggestions.getByRole("button", { name: "Where is order 1001?" }).waitFor();
      expect(opened.errors).toEqual([]);
      await opened.context.close();
    }, 120_000);
  }

  for (const [label, viewport] of [
    ["desktop", VIEWPORTS.desktop],
    ["phone", VIEWPORTS.phone],
  ] as const) {
    it(`the shop's owner sees the source, its tools marked read and write, and the profile's switches (${label})`, async () => {
      if (!browser || !stack) throw new Error("no stack");
      const opened = await openContext(browser, viewport, "light");
      const page = opened.page;
      await page.goto(`${stack.base}/signin`);
      await page.getByLabel("Email").fill(owner.email);
      await page.getByLabel("Password").fill(owner.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL((url) => url.pathname === "/projects");
      await page.goto(`${stack.base}/assistants#tools`);
      const source = page.getByRole("region", { name: "Acme Shop orders" });
      await source.waitFor();
      const status = source.getByRole("listitem").filter({ hasText: "order_status" });
      await status.getByText("Read", { exact: true }).waitFor();
      const refund = source.getByRole("listitem").filter({ hasText: "request_refund" });
      await refund.getByText("Write · asks first").waitFor();
      await source.getByRole("button", { name: "Refresh tools" }).waitFor();
      expect(await sidewaysOverflow(page)).toBe(0);
      expect(await axeProblems(page, `tools tab, ${label}`)).toEqual([]);

      // The app's profile switches both on.
      await page.getByRole("tab", { name: "Profiles" }).click();
      await page.getByRole("link", { name: /Acme Shop assistant/ }).click();
      await page.waitForURL(/\/assistants\/profiles\//);
      const refundSwitch = page.getByRole("checkbox", { name: /request_refund/ });
      await refundSwitch.waitFor();
      expect(await refundSwitch.isChecked()).toBe(true);
      expect(await page.getByRole("checkbox", { name: /order_status/ }).isChecked()).toBe(true);
      expect(await sidewaysOverflow(page)).toBe(0);
      expect(await axeProblems(page, `profile editor with source tools, ${label}`)).toEqual([]);

      // Billing activity with the shoppers' tool calls: a tool call, named by its source and tool
      // (never the raw `tool:<sourceId>:<tool>` usage key), and nothing sideways at 390 px.
      // The shoppers' chats report their calls to the org's account when a read asks, and a read
      // waits for that at most 2 s: on a loaded machine the page's one read can miss them. Each
      // look is a fresh load of the page.
      const toolCall = page.getByText("Acme Shop orders · order_status").filter({ visible: true });
      await expect
        .poll(
          async () => {
            await page.goto(`${stack?.base}/billing#activity`);
            const activity = page.getByRole("region", { name: "Activity" });
            const calls = "Model and tool calls, newest first";
            // Loaded: its calls (a table, or a list on a phone), or none yet.
            await activity
              .getByRole("table", { name: calls })
              .or(activity.getByRole("list", { name: calls }))
              .or(activity.getByText("No activity yet"))
              .first()
              .waitFor();
            return toolCall.count();
          },
          { timeout: 60_000, interval: 1_000 },
        )
        .toBeGreaterThan(0);
      expect(await page.getByText(/tool:tsrc_/).count()).toBe(0);
      expect(await sidewaysOverflow(page)).toBe(0);
      expect(await axeProblems(page, `billing activity with tool calls, ${label}`)).toEqual([]);
      expect(opened.errors).toEqual([]);
      await opened.context.close();
    }, 120_000);
  }
});
