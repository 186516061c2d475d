// The web app in Chromium (issue 13's budgets): first contentful paint of the sign-in page, and how
// long a 200-message session takes to become interactive, against the whole platform started the
// way `pnpm dev` starts it (scripts/lib/dev-stack.mjs: web build, migrations, wrangler dev, dev
// model, Stripe stand-in), state in a temporary directory. Debian's chromium through playwright-core
// (the copy tests/e2e installs), every sample in a fresh browser context: a cold HTTP cache.
import { createServer } from "node:http";
import { connectChat } from "../packages/chat-client/src/index.ts";
import { startDevStack } from "../scripts/lib/dev-stack.mjs";
import { launchChromium } from "../tests/e2e/test/browser.ts";
import { clientIp, json, ms, signUp, summarize } from "./lib.mjs";

const FCP_BUDGET_MS = 300;
const INTERACTIVE_BUDGET_MS = 1500;
const VIEWPORT = { width: 1280, height: 800 };

/** The reference page: the least HTML that paints text, from a plain Node server. */
async function startHello() {
  const page = "<!doctype html><html lang=en><title>Hello</title><p>Hello, world</p></html>";
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
    res.end(page);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    stop: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  };
}

/**
 * Runs in every page before its own scripts: records when the page shows a password field (the
 * sign-in form), and, when `needle` is given, when the composer (textbox "Message") is enabled and
 * the newest message's text (`needle`) is on screen, not covered or scrolled away. Checked every
 * frame; the text is searched again only after the DOM changed. Sockets are wrapped to time them.
 */
export function probe(needle) {
  const bench = { marks: {}, sockets: [], longTasks: 0 };
  window.__bench = bench;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) bench.longTasks += entry.duration;
  }).observe({ type: "longtask", buffered: true });
  new PerformanceObserver((list) => {
    const entry = list.getEntriesByName("first-contentful-paint")[0];
    if (entry) bench.fcp ??= entry.startTime;
  }).observe({ type: "paint", buffered: true });
  const mark = (name) => {
    bench.marks[name] ??= performance.now();
  };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      const socket = { start: performance.now(), messages: 0, chars: 0 };
      bench.sockets.push(socket);
      this.addEventListener("open", () => {
        socket.open = performance.now();
      });
      this.addEventListener("message", (event) => {
        socket.firstMessage ??= performance.now();
        socket.messages += 1;
        socket.chars += typeof event.data === "string" ? event.data.length : 0;
      });
    }
  };
  // What index.html itself asks for, read when parsing ends (before its module scripts run and
  // add modulepreload links for lazy chunks).
  document.addEventListener("readystatechange", () => {
    if (document.readyState !== "interactive" || bench.initial) return;
    bench.initial = [...document.querySelectorAll("script[src], link[rel=modulepreload]")].map(
      (e) => new URL(e.src || e.href).pathname,
    );
  });
  let dirty = true;
  let found = null;
  const findText = () => {
    if (found?.isConnected && !dirty) return found;
    dirty = false;
    found = null;
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.data.includes(needle)) found = node; // the last one: the newest
    }
    return found;
  };
  const onScreen = (node) => {
    const range = document.createRange();
    range.selectNodeContents(node);
    const rects = [...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0);
    if (rects.length === 0) return false;
    return [rects[0], rects.at(-1)].every((rect) => {
      const x = rect.left + Math.min(rect.width / 2, 8);
      const y = rect.top + rect.height / 2;
      if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return false;
      const hit = document.elementFromPoint(x, y);
      return hit !== null && (hit === node.parentElement || node.parentElement.contains(hit));
    });
  };
  const check = () => {
    if (document.body) {
      if (document.querySelector('input[type="password"]')) mark("form");
      if (needle) {
        const box = document.querySelector('textarea[aria-label="Message"]');
        if (box) mark("composer");
        const enabled =
          box !== null && !box.disabled && box.getAttribute("aria-disabled") !== "true";
        if (enabled) mark("composerEnabled");
        const text = findText();
        if (text) mark("newestInDom");
        const visible = text !== null && onScreen(text);
        if (visible) mark("newestVisible");
        if (enabled && visible) {
          bench.interactive = performance.now();
          bench.rendered = document.querySelectorAll('ol[aria-label$="messages"] > li').length;
          return;
        }
      }
    }
    requestAnimationFrame(check);
  };
  new MutationObserver(() => {
    dirty = true;
  }).observe(document, { subtree: true, childList: true, characterData: true });
  requestAnimationFrame(check);
}

/**
 * In the page: its resources (path, start, end, size, time waiting for the first byte) and which
 * of them index.html asked for (`<script src>`, `<link rel=modulepreload>`).
 */
function pageResources() {
  const initial = new Set(window.__bench?.initial ?? []);
  return performance.getEntriesByType("resource").map((r) => {
    const name = new URL(r.name).pathname;
    return {
      name,
      initial: initial.has(name),
      start: r.startTime,
      end: r.responseEnd,
      wait: r.responseStart - r.startTime,
      size: r.encodedBodySize,
    };
  });
}

/** When the initial JS had arrived, when the lazy chunks had, and the median wait per asset. */
function assetTimes(resources) {
  const scripts = resources.filter((r) => r.name.endsWith(".js"));
  const end = (list) => (list.length === 0 ? null : Math.max(...list.map((r) => r.end)));
  const waits = resources.filter((r) => r.name.startsWith("/assets/")).map((r) => r.wait);
  return {
    initialJs: end(scripts.filter((r) => r.initial)),
    routeJs: end(scripts.filter((r) => !r.initial)),
    assetWait: waits.length === 0 ? null : summarize(waits).p50,
  };
}

/** Loads `url` in `context` and waits for its first contentful paint (ms from navigation start). */
async function paint(context, url) {
  const page = await context.newPage();
  const signin = url.endsWith("/signin");
  await page.goto(url, { waitUntil: "load" });
  // The sign-in form is shown after the first paint (a route chunk): wait for both.
  await page.waitForFunction(
    (form) => window.__bench?.fcp !== undefined && (!form || window.__bench.marks.form),
    signin,
    { timeout: 30_000, polling: 50 },
  );
  const result = await page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0];
    return {
      fcp: window.__bench.fcp,
      ttfb: nav?.responseStart ?? null,
      form: window.__bench.marks.form ?? null,
      longTasks: window.__bench.longTasks,
    };
  });
  const resources = await page.evaluate(pageResources);
  return { ...result, ...assetTimes(resources) };
}

/**
 * Runs one sample; a page that navigated away under it (an app rebuilt under the running stack, say)
 * is tried again, twice at most, and counted.
 */
async function retried(counter, sample) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await sample();
    } catch (error) {
      if (attempt >= 2 || !/context was destroyed|navigat/i.test(String(error))) throw error;
      counter.retries += 1;
      console.log(`[bench] web: sample retried (${String(error).split("\n")[0]})`);
    }
  }
}

/**
 * Opens `url` and resolves once the session is interactive, with the time from just before
 * `page.goto` (this process's clock and the page's `performance.timeOrigin` are the same clock) and
 * the milestones on the way (ms from navigation start).
 */
export async function open(page, url) {
  const start = performance.timeOrigin + performance.now();
  await page.goto(url, { waitUntil: "commit" });
  await page.waitForFunction(() => window.__bench?.interactive !== undefined, null, {
    timeout: 30_000,
    polling: 50,
  });
  const resources = await page.evaluate(pageResources);
  const info = await page.evaluate(() => {
    const nav = performance.getEntriesByType("navigation")[0];
    return {
      origin: performance.timeOrigin,
      interactive: window.__bench.interactive,
      rendered: window.__bench.rendered,
      marks: window.__bench.marks,
      sockets: window.__bench.sockets,
      html: nav?.responseEnd ?? null,
      fcp: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null,
      longTasks: window.__bench.longTasks,
    };
  });
  return { ...info, resources, total: info.origin + info.interactive - start };
}

/** The milestones of one load, ms from navigation start: what the time went to. */
export function milestones(info) {
  const last = (test) => {
    const hits = info.resources.filter((r) => test(r.name));
    return hits.length === 0 ? null : Math.max(...hits.map((r) => r.end));
  };
  const socket = info.sockets.find((s) => s.open !== undefined) ?? info.sockets[0];
  const assets = assetTimes(info.resources);
  return {
    "HTML received": info.html,
    "initial JS received (index.html's scripts)": assets.initialJs,
    "first contentful paint": info.fcp,
    "token refreshed (/api/auth/refresh)": last((n) => n === "/api/auth/refresh"),
    "session route chunk received": last((n) => /\/assets\/session-page-/.test(n)),
    "session record received (/api/sessions/:id)": last((n) => /^\/api\/sessions\/[^/]+$/.test(n)),
    "connect ticket received": last((n) => n === "/api/connect-tickets"),
    "transcript received (get-messages)": last((n) => n.endsWith("/get-messages")),
    "socket open": socket?.open ?? null,
    "composer shown": info.marks.composer ?? null,
    "composer enabled": info.marks.composerEnabled ?? null,
    "newest message in the DOM": info.marks.newestInDom ?? null,
    "newest message on screen (interactive)": info.interactive,
    "(median wait for an asset's first byte)": assets.assetWait,
    "(main-thread long tasks, total)": info.longTasks,
  };
}

/**
 * Sends turns over the agents WebSocket until the session holds `turns` x 2 messages. A dropped
 * socket (wrangler dev reloads when a file it serves changes) reconnects and goes on, five times at
 * most.
 */
export async function seed(base, auth, sessionId, turns, label) {
  const ticket = async () =>
    (await auth.post("/api/connect-tickets", { agent: "assistant-agent", name: sessionId })).ticket;
  const url = `${base}/agents/assistant-agent/${sessionId}`;
  const stored = () =>
    json(`${url}/get-messages`, { headers: { authorization: `Bearer ${auth.token}` } });
  const pad = String(turns).length;
  let failures = 0;
  let client = await connectChat(url, { token: auth.token, ticket, sendHistory: "last" });
  try {
    for (let i = (await stored()).length / 2 + 1; i <= turns; ) {
      const text = `${label} turn ${String(i).padStart(pad, "0")} of ${turns}, seeded by the web benchmark`;
      const result = await client.send(text).done;
      if (!result.error && result.outcome === "completed") {
        i++;
        continue;
      }
      if (++failures > 5)
        throw new Error(`seeding ${label} failed at ${i}: ${result.error ?? result.outcome}`);
      console.log(`[bench] web: seeding ${label} turn ${i} ${result.outcome}; reconnecting`);
      client.close();
      await new Promise((r) => setTimeout(r, 2000));
      client = await connectChat(url, { token: auth.token, ticket, sendHistory: "last" });
      i = Math.floor((await stored()).length / 2) + 1;
    }
  } finally {
    client.close();
  }
  const messages = await stored();
  const newest = messages.at(-1);
  const text = newest?.parts
    ?.filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("");
  if (messages.length < turns * 2 || newest.role !== "assistant" || !text)
    throw new Error(`${label}: expected ${turns * 2} messages ending in a reply`);
  // "Dev model reply to:" and the prompt's first five words: this reply and no other message.
  return { count: messages.length, needle: text.split(" ").slice(0, 9).join(" ") };
}

const row = (cells) => `| ${cells.join(" | ")} |`;
const p = (samples, key = "p50") => {
  const known = samples.filter((v) => typeof v === "number");
  return known.length === 0 ? "-" : ms(summarize(known)[key]);
};

export async function benchWeb({ paintSamples = 20, sessionSamples = 10, warmups = 2 } = {}) {
  const started = await Promise.allSettled([
    startDevStack({ timeoutMs: 180_000 }),
    startHello(),
    // The browser suite's own launch (Debian's chromium, the same flags).
    launchChromium(),
  ]);
  const failed = started.find((r) => r.status === "rejected");
  if (failed) {
    const [stack, hello, browser] = started.map((r) => r.value);
    await Promise.allSettled([stack?.stop(), hello?.stop(), browser?.close()]);
    throw failed.reason;
  }
  const [stack, hello, browser] = started.map((r) => r.value);
  const fresh = async (needle) => {
    const context = await browser.newContext({ viewport: VIEWPORT });
    await context.addInitScript(probe, needle ?? "");
    return context;
  };
  try {
    const base = stack.base;
    // 1. First contentful paint: the sign-in page and the reference page, interleaved.
    const paints = { signin: [], hello: [] };
    const counter = { retries: 0 };
    for (let i = 0; i < warmups + paintSamples; i++) {
      const order = i % 2 === 0 ? ["signin", "hello"] : ["hello", "signin"];
      for (const kind of order) {
        const result = await retried(counter, async () => {
          const context = await fresh();
          try {
            return await paint(context, kind === "signin" ? `${base}/signin` : hello.url);
          } finally {
            await context.close();
          }
        });
        if (i >= warmups) paints[kind].push(result);
      }
    }

    // 2. Sessions of 200 and 10 messages, seeded over the agents WebSocket.
    const auth = await signUp(base, "web-bench");
    const project = await auth.post(`/api/orgs/${auth.orgId}/projects`, { name: "Web bench" });
    const seedStart = performance.now();
    const sessions = {};
    for (const [kind, turns] of [
      ["long", 100],
      ["short", 5],
    ]) {
      const session = await auth.post(`/api/projects/${project.id}/sessions`, {});
      sessions[kind] = { id: session.id, ...(await seed(base, auth, session.id, turns, kind)) };
    }
    const seedSeconds = (performance.now() - seedStart) / 1000;

    const loads = { long: { cold: [], warm: [] }, short: { cold: [], warm: [] } };
    for (let i = 0; i < 1 + sessionSamples; i++) {
      const order = i % 2 === 0 ? ["long", "short"] : ["short", "long"];
      for (const kind of order) {
        const session = sessions[kind];
        const sample = await retried(counter, async () => {
          const context = await fresh(session.needle);
          try {
            // Signed in as a returning visitor: the refresh cookie is in the jar, the page restores
            // the session from it (each sample signs in anew: refresh tokens are single-use).
            const login = await context.request.post(`${base}/api/auth/login`, {
              headers: { "cf-connecting-ip": clientIp() },
              data: { email: auth.email, password: auth.password },
            });
            if (!login.ok())
              throw new Error(`sign-in failed: ${login.status()} ${await login.text()}`);
            const page = await context.newPage();
            const url = `${base}/sessions/${encodeURIComponent(session.id)}`;
            const cold = await open(page, url);
            const warm = await open(page, url);
            return { cold, warm };
          } finally {
            await context.close();
          }
        });
        if (i === 0) continue; // the first load of each wakes what the seeding left idle
        loads[kind].cold.push(sample.cold);
        loads[kind].warm.push(sample.warm);
      }
    }

    const fcp = (kind) => paints[kind].map((r) => r.fcp);
    const signinFcp = summarize(fcp("signin"));
    const helloFcp = summarize(fcp("hello"));
    const total = (kind, cache) => loads[kind][cache].map((r) => r.total);
    const long = summarize(total("long", "cold"));
    const short = summarize(total("short", "cold"));
    const rendered = (kind) => Math.min(...loads[kind].cold.map((r) => r.rendered));
    const breakdown = (kind) => {
      const all = loads[kind].cold.map(milestones);
      return Object.fromEntries(
        Object.keys(all[0]).map((key) => {
          const values = all.map((m) => m[key]).filter((v) => v !== null);
          return [key, values.length === 0 ? "-" : p(values)];
        }),
      );
    };
    const longSteps = breakdown("long");
    const shortSteps = breakdown("short");
    const transcriptSize = (kind) => {
      const sizes = loads[kind].cold
        .map((r) => r.resources.find((x) => x.name.endsWith("/get-messages"))?.size)
        .filter((v) => v !== undefined);
      return sizes.length ? `${(Math.max(...sizes) / 1000).toFixed(1)} KB` : "-";
    };

    return [
      "## Web app in Chromium (issue 13)",
      "",
      "The platform as `pnpm dev` starts it (scripts/lib/dev-stack.mjs: web build, D1 migrations, wrangler",
      "dev, dev model, Stripe stand-in; state in a temp dir), Debian's chromium through playwright-core,",
      `${VIEWPORT.width}x${VIEWPORT.height}, every sample in a fresh browser context (cold HTTP cache).`,
      `First contentful paint: \`performance.getEntriesByName("first-contentful-paint")\`, ${paintSamples} loads of /signin`,
      "signed out, interleaved with a hello-world page from a plain node:http server on the same machine",
      `(the reference: what this browser on this machine needs to paint anything); ${warmups} warm-up loads of each first.`,
      "Target: sign-in FCP p50 at most 300 ms.",
      "",
      row([
        "page",
        "samples",
        "FCP p50",
        "FCP p90",
        "HTML first byte p50",
        "initial JS in p50",
        "route chunk in p50",
        "asset wait p50",
        "long tasks p50",
        "sign-in form shown p50",
        "target",
      ]),
      row(Array(11).fill("---")),
      row([
        "sign-in page (/signin)",
        signinFcp.n,
        ms(signinFcp.p50),
        ms(signinFcp.p90),
        p(paints.signin.map((r) => r.ttfb)),
        p(paints.signin.map((r) => r.initialJs)),
        p(paints.signin.map((r) => r.routeJs)),
        p(paints.signin.map((r) => r.assetWait)),
        p(paints.signin.map((r) => r.longTasks)),
        p(paints.signin.map((r) => r.form)),
        `${signinFcp.p50 <= FCP_BUDGET_MS ? "met" : "MISSED"} (p50 <= ${FCP_BUDGET_MS} ms)`,
      ]),
      row([
        "hello-world HTML (node:http, reference)",
        helloFcp.n,
        ms(helloFcp.p50),
        ms(helloFcp.p90),
        p(paints.hello.map((r) => r.ttfb)),
        "-",
        "-",
        "-",
        p(paints.hello.map((r) => r.longTasks)),
        "-",
        "-",
      ]),
      "",
      `Sign-in FCP is ${(signinFcp.p50 / helloFcp.p50).toFixed(2)}x the reference page's (p50). Times are ms from`,
      'navigation start; "asset wait" is the median time from requesting a file under /assets/ to its',
      "first byte (wrangler dev's static assets), \"long tasks\" the main thread's tasks over 50 ms, summed.",
      "",
      `A session of ${sessions.long.count} messages and one of ${sessions.short.count}, in one project, seeded over the agents`,
      `WebSocket from Node (connect tickets, dev model at zero latency; ${seedSeconds.toFixed(1)} s). Each sample signs in`,
      "through `POST /api/auth/login` in a fresh context (the refresh cookie in its jar, as a returning",
      "visitor), then times from just before `page.goto('/sessions/<id>')` to the first frame in which the",
      'composer (textbox "Message") is enabled and the newest message\'s text is on screen (hit-tested at',
      "its first and last line: scrolled to the newest, not covered). Cold: the context's first load;",
      `warm: a second load of the same URL in it (HTTP cache filled). ${sessionSamples} samples each, interleaved, after one`,
      "unmeasured load of each. Target: 200-message session cold p50 at most 1.5 s. The chat renders the",
      'newest 40 messages on open ("messages rendered"); earlier ones come in pages of 40 when the person',
      "scrolls to the top (packages/chat-ui/src/chat-view.tsx, TRANSCRIPT_WINDOW); the whole transcript",
      "is fetched either way.",
      "",
      row([
        "session",
        "messages rendered",
        "cold p50",
        "cold p90",
        "warm p50",
        "warm p90",
        "target",
      ]),
      row(["---", "---", "---", "---", "---", "---", "---"]),
      ...["long", "short"].map((kind) => {
        const cold = summarize(total(kind, "cold"));
        const warm = summarize(total(kind, "warm"));
        return row([
          `${sessions[kind].count} messages`,
          rendered(kind),
          ms(cold.p50),
          ms(cold.p90),
          ms(warm.p50),
          ms(warm.p90),
          kind === "long"
            ? `${cold.p50 <= INTERACTIVE_BUDGET_MS ? "met" : "MISSED"} (p50 <= 1,500 ms)`
            : "-",
        ]);
      }),
      "",
      `The ${sessions.long.count}-message session takes ${(long.p50 / short.p50).toFixed(2)}x the ${sessions.short.count}-message one's time (cold p50).`,
      `Where the time goes (cold, p50 of each milestone, ms from navigation start; transcript over HTTP:`,
      `${transcriptSize("long")} vs ${transcriptSize("short")} encoded):`,
      "",
      ...(counter.retries > 0
        ? [
            `(${counter.retries} sample(s) retried: the page navigated away under the measurement.)`,
            "",
          ]
        : []),
      row(["milestone", `${sessions.long.count} messages`, `${sessions.short.count} messages`]),
      row(["---", "---", "---"]),
      ...Object.keys(longSteps).map((key) => row([key, longSteps[key], shortSteps[key]])),
    ].join("\n");
  } finally {
    await stack.stop().catch(() => undefined);
    await browser.close().catch(() => undefined);
    await hello.stop().catch(() => undefined);
  }
}
