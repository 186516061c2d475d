import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type DevStack, startDevStack } from "../../../scripts/lib/dev-stack.mjs";
import {
  axeProblems,
  freshEmail,
  launchChromium,
  openContext,
  openMailLink,
  sidewaysOverflow,
  signUp,
  VIEWPORTS,
  verifyEmailFromMailbox,
} from "./browser.ts";

/**
 * Mail, end to end (docs/2026-12-06-mail.md), against the stack as `pnpm dev` starts it, whose
 * mail goes to the development mailbox: a person invited by mail joins from the mailbox, and a
 * forgotten password is reset from it. Each flow runs at 1366 and at 390 px; every app page on
 * the way is checked with axe and for sideways scrolling, and nothing is logged as an error.
 * Sign-ups are 5 a minute per client address (wrangler.jsonc), and every browser here is one
 * address: the reset is done by the person the invitation brought in, so the file signs up four.
 */
let stack: DevStack | undefined;
let browser: Browser | undefined;
let base = "";
let mailbox = "";
const PASSWORD = "correct horse battery";

beforeAll(async () => {
  const starting = startDevStack({ timeoutMs: 150_000 });
  browser = await launchChromium();
  stack = await starting;
  base = stack.base;
  mailbox = stack.mailbox;
}, 180_000);

afterEach((context) => {
  if (context.task.result?.state === "fail") console.log(stack?.log().slice(-3000));
});

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await stack?.stop();
});

/** Axe and sideways scroll on the app page now on screen (the mailbox's own pages are not the app's). */
async function audit(page: Page, label: string, problems: string[]): Promise<void> {
  await page.waitForLoadState("networkidle").catch(() => undefined);
  const overflow = await sidewaysOverflow(page);
  if (overflow > 0) problems.push(`${label}: scrolls ${overflow}px sideways`);
  problems.push(...(await axeProblems(page, label)));
}

async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${base}/signin`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

for (const [size, viewport] of Object.entries(VIEWPORTS)) {
  describe(`mail at ${size} (${viewport.width} px)`, () => {
    /** Who joined through the invitation: the next case resets their password. */
    let invitee = "";

    it("invites a person by mail, and they join from the mailbox", async () => {
      if (!browser) throw new Error("no browser");
      const problems: string[] = [];
      const owner = await openContext(browser, viewport, "light");
      const ownerEmail = freshEmail("olive");
      await signUp(owner.page, base, {
        name: "Olive Owner",
        email: ownerEmail,
        org: `Mailers ${size}`,
      });
      // Unverified: the banner asks for the confirmation (and Parley mails no invitation for it).
      await owner.page.getByRole("region", { name: "Confirm your email address" }).waitFor();
      await audit(owner.page, `${size} projects, unverified`, problems);
      await verifyEmailFromMailbox(owner.page, mailbox, ownerEmail);
      await audit(owner.page, `${size} verify-email, done`, problems);

      const inviteeEmail = freshEmail("ivy");
      await owner.page.goto(`${base}/members`);
      const add = owner.page.getByRole("form", { name: "Add a member" });
      await add.getByLabel("Email").fill(inviteeEmail);
      await add.getByLabel("Role").selectOption("member");
      await add.getByRole("button", { name: "Add member" }).click();
      await add.getByText("Parley mailed it to them too.").waitFor();
      await audit(owner.page, `${size} members, invited`, problems);

      // The invitee reads the mail in the mailbox and follows its link.
      const ivy = await openContext(browser, viewport, "dark");
      await openMailLink(ivy.page, mailbox, {
        email: inviteeEmail,
        subject: new RegExp(`^Join Mailers ${size} on Parley$`),
        linkPath: "/invite",
      });
      await ivy.page.getByText(/on Parley as member/).waitFor();
      await audit(ivy.page, `${size} invite, signed out`, problems);
      // Signing up on the invitation itself, with the invited address locked, joins in one click.
      const join = ivy.page.getByRole("form", { name: `Join Mailers ${size}` });
      expect(await join.getByLabel("Email").inputValue()).toBe(inviteeEmail);
      await join.getByLabel("Name", { exact: true }).fill("Ivy Invitee");
      await join.getByLabel("Password").fill(PASSWORD);
      await join.getByRole("button", { name: `Join Mailers ${size}` }).click();
      await ivy.page.waitForURL((url) => url.pathname === "/projects");
      await expect
        .poll(async () => (await ivy.page.locator("header").textContent()) ?? "")
        .toContain(`Mailers ${size}`);
      // The invitation mailed to her address proved it (2026-12-06): the shell, drawn from the
      // same /api/me as the header above, asks her to confirm nothing.
      expect(
        await ivy.page.getByRole("region", { name: "Confirm your email address" }).count(),
      ).toBe(0);

      // The owner sees them among the members.
      await owner.page.goto(`${base}/members`);
      await owner.page.getByRole("combobox", { name: "Role of Ivy Invitee" }).waitFor();
      invitee = inviteeEmail;
      expect(problems).toEqual([]);
      expect(owner.errors).toEqual([]);
      expect(ivy.errors).toEqual([]);
      await owner.context.close();
      await ivy.context.close();
    });

    it("resets a forgotten password from the mailbox, and the old one stops working", async () => {
      if (!browser) throw new Error("no browser");
      const problems: string[] = [];
      // The invitee of the case before, who never confirmed their address: the link proves it.
      const email = invitee;
      if (!email) throw new Error("the invitation case did not bring anyone in");
      const { context, page, errors } = await openContext(browser, viewport, "light");
      await page.goto(`${base}/signin`);
      await page.getByRole("link", { name: "Forgot your password?" }).click();
      await page.getByRole("heading", { name: "Forgot your password" }).waitFor();
      await audit(page, `${size} forgot-password`, problems);
      // Refused as the API refuses: not an address.
      await page.getByLabel("Email").fill("not an address");
      await page.getByRole("button", { name: "Send me a link" }).click();
      expect(await page.getByRole("heading", { name: "Forgot your password" }).count()).toBe(1);
      await page.getByLabel("Email").fill(email);
      await page.getByRole("button", { name: "Send me a link" }).click();
      await page.getByText(/a link is on its way/).waitFor();
      await audit(page, `${size} forgot-password, sent`, problems);

      await openMailLink(page, mailbox, {
        email,
        subject: /^Reset your Parley password$/,
        linkPath: "/reset-password",
      });
      await page.getByRole("heading", { name: "Choose a new password" }).waitFor();
      // The secret left the address bar as the page read it.
      expect(new URL(page.url()).hash).toBe("");
      await audit(page, `${size} reset-password`, problems);
      const newPassword = "a brand new battery";
      await page.getByLabel(/^New password/).fill(newPassword);
      await page.getByLabel("The same password again").fill(`${newPassword}!`);
      await page.getByRole("button", { name: "Set the new password" }).click();
      await page.getByRole("alert").getByText("The two passwords are not the same").waitFor();
      await page.getByLabel("The same password again").fill(newPassword);
      await page.getByRole("button", { name: "Set the new password" }).click();
      await page.waitForURL((url) => url.pathname === "/signin");
      await page.getByText(/Your password is changed/).waitFor();
      await audit(page, `${size} sign-in after reset`, problems);

      await signIn(page, email, PASSWORD);
      await page.getByRole("alert").getByText("Invalid email or password").waitFor();
      await signIn(page, email, newPassword);
      await page.waitForURL((url) => url.pathname === "/projects");
      // The link proved the mailbox: the account is verified, no banner.
      expect(await page.getByRole("region", { name: "Confirm your email address" }).count()).toBe(
        0,
      );
      expect(problems).toEqual([]);
      // The one refused sign-in with the old password is the only failed call.
      expect(errors.filter((line) => !/status of 401/.test(line))).toEqual([]);
      await context.close();
    });
  });
}
