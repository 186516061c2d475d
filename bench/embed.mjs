// The embed's time to first token against the web app's (issue 15), in Chromium, side by side in
// one run: the platform and the example host app as `pnpm dev --example` starts them
// (scripts/lib/dev-stack.mjs), one end user chatting through `<parley-assistant>` on the shop's
// page and one member chatting in Parley's own session page, turns interleaved. A turn's time to
// first token is from the Enter key in the composer to the reply's first text on screen; the same
// dev model answers both at zero latency, so the difference is the client and its path.
import { readFileSync } from "node:fs";
import { startDevStack } from "../scripts/lib/dev-stack.mjs";
import { launchChromium } from "../tests/e2e/test/browser.ts";
import { ms, summarize } from "./lib.mjs";

const VIEWPORT = { width: 1280, height: 800 };
const REPLY = "Dev model reply to:";

/**
 * In the page: resolves with how long after now the `count + 1`th reply's text is in the DOM (the
 * web app's document, or the assistant element's shadow root), checked every animation frame.
 */
function untilReply({ reply, count }) {
  const start = performance.now();
  const text = () =>
    (document.querySelector("parley-assistant")?.shadowRoot ?? document.body).textContent ?? "";
  const seen = () => text().split(reply).length - 1;
  return new Promise((resolve) => {
    const check = () =>
      seen() > count ? resolve(performance.now() - start) : requestAnimationFrame(check);
    requestAnimationFrame(check);
  });
}

function repliesIn({ reply }) {
  const text =
    (document.querySelector("parley-assistant")?.shadowRoot ?? document.body).textContent ?? "";
  return text.split(reply).length - 1;
}

/** One turn in `page`: types `message`, presses Enter, waits for the reply and the idle composer. */
async function turn(page, message) {
  const box = page.getByRole("textbox", { name: "Message" });
  await box.fill(message);
  const count = await page.evaluate(repliesIn, { reply: REPLY });
  const waiting = page.evaluate(untilReply, { reply: REPLY, count });
  await box.press("Enter");
  const ttft = await waiting;
  // The turn ends before the next starts: the send button is back.
  await page.getByRole("button", { name: "Send" }).waitFor();
  return ttft;
}

export async function benchEmbed({ turns = 20, warmups = 3 } = {}) {
  const [stack, browser] = await Promise.all([
    startDevStack({ timeoutMs: 180_000, example: true }),
    launchChromium(),
  ]);
  try {
    const { owner } = JSON.parse(readFileSync(stack.exampleState, "utf8"));
    // The embed: an end user signed in to the shop, the assistant inline on its page.
    const shop = await (await browser.newContext({ viewport: VIEWPORT })).newPage();
    await shop.goto(stack.exampleBase);
    await shop.getByLabel("Your name").fill("Bench Shopper");
    await shop.getByRole("button", { name: "Sign in" }).click();
    await shop.getByRole("textbox", { name: "Message" }).waitFor();
    // The web app: the org's owner in a session of the same project.
    const web = await (await browser.newContext({ viewport: VIEWPORT })).newPage();
    await web.goto(`${stack.base}/signin`);
    await web.getByLabel("Email").fill(owner.email);
    await web.getByLabel("Password").fill(owner.password);
    await web.getByRole("button", { name: "Sign in" }).click();
    await web.waitForURL((url) => url.pathname === "/projects");
    await web.getByRole("link", { name: "Shop assistant" }).first().click();
    await web.getByRole("button", { name: "New chat" }).click();
    await web.waitForURL(/\/sessions\//);

    const samples = { embed: [], web: [] };
    for (let i = 0; i < warmups + turns; i++) {
      const order = i % 2 === 0 ? ["embed", "web"] : ["web", "embed"];
      for (const kind of order) {
        const ttft = await turn(kind === "embed" ? shop : web, `bench ${kind} ${i}`);
        if (i >= warmups) samples[kind].push(ttft);
      }
    }
    const embed = summarize(samples.embed);
    const webApp = summarize(samples.web);
    return [
      "## The embed's time to first token against the web app's (issue 15)",
      "",
      "`pnpm bench embed` (bench/embed.mjs): the platform and the example host app as `pnpm dev --example`",
      "starts them, Chromium, one end user chatting through `<parley-assistant>` (inline) on the shop's",
      "page and one member in the web app's session page, same project, same zero-latency dev model,",
      `turns interleaved; ${turns} turns each after ${warmups} warm-ups. Time to first token: Enter in the`,
      "composer to the reply's first text in the DOM (checked every animation frame).",
      "",
      "| | p50 | p90 | max |",
      "| --- | --- | --- | --- |",
      `| embed (shadow DOM, end-user token) | ${ms(embed.p50)} | ${ms(embed.p90)} | ${ms(embed.max)} |`,
      `| web app (member session) | ${ms(webApp.p50)} | ${ms(webApp.p90)} | ${ms(webApp.max)} |`,
      `| ratio embed / web app | ${(embed.p50 / webApp.p50).toFixed(2)}x | ${(embed.p90 / webApp.p90).toFixed(2)}x | |`,
      "",
    ].join("\n");
  } finally {
    await browser.close();
    await stack.stop();
  }
}
