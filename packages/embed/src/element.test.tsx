import { apiError, type Call, fakeNetwork, json } from "@parley/embed-core/testing";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { defineParleyAssistant, type ParleyAssistantElement } from "./element.tsx";

const PARLEY = "https://parley.example";

const session = (id: string, spendMicros = 4200) => ({
  id,
  projectId: "prj_1",
  orgId: "org_1",
  ownerId: "eu_1",
  ownerLabel: "Ada",
  title: `Chat ${id}`,
  createdAt: "2026-12-01T10:00:00Z",
  updatedAt: "2026-12-01T10:00:00Z",
  lastActivityAt: "2026-12-01T10:00:00Z",
  spendMicros,
});

const transcript = [
  { id: "u1", role: "user", parts: [{ type: "text", text: "What is Parley?" }] },
  {
    id: "a1",
    role: "assistant",
    parts: [{ type: "text", text: "An assistant platform.", state: "done" }],
    metadata: { priceMicros: 4200, tokens: { promptTokens: 10, completionTokens: 5 } },
  },
];

interface World {
  showCost?: boolean;
  sessions?: ReturnType<typeof session>[];
  /** A second page of the chat list, behind the cursor "next". */
  olderSessions?: ReturnType<typeof session>[];
  /** Answers for /api/embed/me before it succeeds (e.g. [401]). */
  meFailures?: number[];
  tokenAnswer?: () => unknown;
  /** What `/api/embed/sessions/:id/limits` answers (none by default). */
  limits?: unknown[];
  /** What get-messages answers (`transcript` by default). */
  messages?: unknown[];
  /** What `/api/embed/sessions/:id/tool-calls` answers (none by default). */
  toolCalls?: unknown[];
  /** The page after `toolCalls` (its cursor: `tcl_older`); none by default. */
  olderToolCalls?: unknown[];
  /** What `/api/embed/projects/prj_1/opening` answers (no profile by default); a number fails. */
  opening?: { welcome: string | null; suggestions: string[] } | number;
}

/** Parley and the host page behind `fetch`: the only thing the tests replace. */
function world(options: World = {}) {
  const failures = [...(options.meFailures ?? [])];
  let minted = 0;
  let tokenCalls = 0;
  const network = fakeNetwork((call: Call) => {
    if (call.path === "/parley-token" && !call.url.startsWith(PARLEY)) {
      tokenCalls += 1;
      return json(options.tokenAnswer?.() ?? { token: `tenant-${tokenCalls}` });
    }
    if (!call.url.startsWith(PARLEY)) return undefined;
    if (call.path === "/api/embed/token") {
      minted += 1;
      return json({
        accessToken: `eu-${minted}`,
        expiresIn: 900,
        endUser: { id: "eu_1", externalId: "user-1" },
      });
    }
    if (!call.headers.authorization?.startsWith("Bearer "))
      return apiError(401, "unauthorized", "");
    if (call.path === "/api/embed/me") {
      const status = failures.shift();
      if (status) return apiError(status, "unauthorized", "Token expired");
      return json({
        endUser: { id: "eu_1", externalId: "user-1", name: "Ada" },
        app: {
          id: "app_1",
          name: "Acme help",
          showCost: options.showCost ?? false,
          projects: [{ id: "prj_1", name: "Docs" }],
        },
      });
    }
    if (call.path.startsWith("/api/embed/sessions?")) {
      if (call.path.includes("cursor=next")) {
        return json({ items: options.olderSessions ?? [], nextCursor: null });
      }
      return json({
        items: options.sessions ?? [],
        nextCursor: options.olderSessions ? "next" : null,
      });
    }
    if (call.path === "/api/embed/projects/prj_1/opening") {
      const opening = options.opening ?? { welcome: null, suggestions: [] };
      return typeof opening === "number"
        ? apiError(opening, "internal", "Something went wrong")
        : json(opening);
    }
    if (call.path === "/api/embed/sessions" && call.method === "POST") {
      return json({ ...session("ses_new"), title: null }, 201);
    }
    if (call.path === "/api/embed/connect-tickets")
      return json({ ticket: "ct_1", expiresAt: "2026-12-02T00:00:00Z" }, 201);
    if (call.path.endsWith("/get-messages")) return json(options.messages ?? transcript);
    if (/^\/api\/embed\/sessions\/[^/]+\/tool-calls(\?|$)/.test(call.path)) {
      if (call.path.includes("cursor=tcl_older")) {
        return json({ items: options.olderToolCalls ?? [], nextCursor: null });
      }
      return json({
        items: options.toolCalls ?? [],
        nextCursor: options.olderToolCalls ? "tcl_older" : null,
      });
    }
    if (/^\/api\/embed\/sessions\/[^/]+\/limits$/.test(call.path)) {
      return json({ warningPct: 80, limits: options.limits ?? [] });
    }
    return apiError(404, "not_found", "Not found");
  });
  vi.stubGlobal("fetch", network.fetch);
  return { ...network, tokenCalls: () => tokenCalls };
}

/** A socket that opens and stays quiet unless a test speaks: the transcript comes from get-messages. */
class QuietSocket extends EventTarget {
  static urls: string[] = [];
  static sockets: QuietSocket[] = [];
  sent: string[] = [];
  readyState = 0;
  binaryType = "blob";
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  constructor(readonly url: string) {
    super();
    QuietSocket.urls.push(url);
    QuietSocket.sockets.push(this);
    setTimeout(() => {
      this.readyState = 1;
      const event = new Event("open");
      this.onopen?.(event);
      this.dispatchEvent(event);
    }, 0);
  }
  send(data: string) {
    this.sent.push(data);
  }
  close() {
    this.readyState = 3;
  }
  /** A frame from the server. */
  receive(frame: Record<string, unknown>) {
    const event = new MessageEvent("message", { data: JSON.stringify(frame) });
    this.onmessage?.(event);
    this.dispatchEvent(event);
  }
}

async function until<T>(probe: () => T | null | undefined | false, what: string): Promise<T> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function place(attributes: Record<string, string>, setup?: (el: ParleyAssistantElement) => void) {
  const element = document.createElement("parley-assistant");
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  setup?.(element);
  document.body.append(element);
  return element;
}

const shadow = (element: HTMLElement) => element.shadowRoot as ShadowRoot;
const launcherOf = (element: HTMLElement) =>
  shadow(element).querySelector<HTMLButtonElement>("button[aria-expanded]");

beforeAll(() => defineParleyAssistant());
beforeEach(() => {
  QuietSocket.urls = [];
  QuietSocket.sockets = [];
  vi.stubGlobal("WebSocket", QuietSocket);
});
afterEach(() => {
  document.body.innerHTML = "";
  document.head.innerHTML = "";
  vi.unstubAllGlobals();
});

const base = { "app-id": "app_1", "token-url": "/parley-token", "parley-url": PARLEY };

describe("<parley-assistant> isolation", () => {
  it("renders in a shadow root the page's CSS cannot reach, with its own stylesheet there", async () => {
    world();
    const page = document.createElement("style");
    page.textContent = "button { color: rgb(255, 0, 0); } .parley-root { display: none; }";
    document.head.append(page);
    const outside = document.createElement("button");
    document.body.append(outside);
    const element = place(base);
    const launcher = await until(() => launcherOf(element), "the launcher");

    // Nothing of the assistant is in the page's DOM, and the page's rules do not apply inside.
    expect(document.querySelector(".parley-root")).toBeNull();
    expect(getComputedStyle(outside).color).toBe("rgb(255, 0, 0)");
    expect(getComputedStyle(launcher).color).not.toBe("rgb(255, 0, 0)");
    const root = shadow(element).querySelector(".parley-root") as HTMLElement;
    expect(getComputedStyle(root).display).not.toBe("none");

    // The assistant's stylesheet is adopted by its shadow root only (one sheet for every
    // assistant on the page), never added to the page's own sheets.
    const second = place(base);
    await until(() => launcherOf(second), "the second launcher");
    expect(shadow(element).adoptedStyleSheets).toHaveLength(1);
    expect(shadow(second).adoptedStyleSheets[0]).toBe(shadow(element).adoptedStyleSheets[0]);
    expect(document.styleSheets).toHaveLength(1); // the page's own <style>
  });
});

describe("<parley-assistant> launcher", () => {
  it("opens a labelled dialog with focus inside, and Esc closes it and returns focus", async () => {
    world();
    const element = place(base);
    const launcher = await until(() => launcherOf(element), "the launcher");
    expect(launcher.getAttribute("aria-expanded")).toBe("false");
    expect(launcher.getAttribute("aria-label")).toBe("Open assistant");
    expect(shadow(element).querySelector('[role="dialog"]')).toBeNull();

    launcher.focus();
    launcher.click();
    const dialog = await until(
      () => shadow(element).querySelector<HTMLElement>('[role="dialog"]:not([hidden])'),
      "the dialog",
    );
    expect(launcher.getAttribute("aria-expanded")).toBe("true");
    expect(launcher.getAttribute("aria-controls")).toBe(dialog.id);
    const title = shadow(element).getElementById(dialog.getAttribute("aria-labelledby") ?? "");
    await until(() => title?.textContent === "Acme help", "the app's name as the dialog's label");
    expect(dialog.contains(shadow(element).activeElement)).toBe(true);

    // With no chat yet the panel offers the message box, and focus goes there.
    const box = await until(() => dialog.querySelector("textarea"), "the message box");
    await until(() => shadow(element).activeElement === box, "focus in the message box");

    box.dispatchEvent(
      new KeyboardEvent("keydown", { key: "Escape", bubbles: true, composed: true }),
    );
    await until(() => launcher.getAttribute("aria-expanded") === "false", "closed");
    expect(dialog.hidden).toBe(true);
    expect(shadow(element).activeElement).toBe(launcher);
  });

  it("says parley-ready with the end user and app, after exchanging a { token } answer", async () => {
    const network = world();
    const ready = vi.fn();
    const element = place(base);
    element.addEventListener("parley-ready", (event) => ready((event as CustomEvent).detail));
    await until(() => ready.mock.calls.length > 0, "parley-ready");
    expect(ready.mock.calls[0]?.[0]).toMatchObject({
      endUser: { id: "eu_1" },
      app: { name: "Acme help" },
    });
    const tokenCall = network.calls.find((c) => c.path === "/parley-token");
    // Resolved against the page: the host's own origin, with its cookies.
    expect(tokenCall?.url).toBe(new URL("/parley-token", document.baseURI).href);
    expect(tokenCall).toMatchObject({ method: "POST", credentials: "include" });
    expect(network.calls.find((c) => c.path === "/api/embed/token")?.body).toEqual({
      appId: "app_1",
      token: "tenant-1",
    });
    const me = network.calls.find((c) => c.path === "/api/embed/me");
    expect(me?.headers.authorization).toBe("Bearer eu-1");
  });

  it("takes an { accessToken, expiresIn } from getToken, and after a 401 gets one new token", async () => {
    const network = world({ meFailures: [401] });
    let answers = 0;
    const element = place({ "app-id": "app_1", "parley-url": PARLEY }, (el) => {
      el.getToken = async () => {
        answers += 1;
        return { accessToken: `minted-${answers}`, expiresIn: 600 };
      };
    });
    const ready = vi.fn();
    element.addEventListener("parley-ready", ready);
    await until(() => ready.mock.calls.length > 0, "parley-ready");
    expect(answers).toBe(2);
    expect(network.calls.some((c) => c.path === "/api/embed/token")).toBe(false);
    expect(
      network.calls.filter((c) => c.path === "/api/embed/me").map((c) => c.headers.authorization),
    ).toEqual(["Bearer minted-1", "Bearer minted-2"]);
  });

  it("says parley-error, and shows it, when the page cannot give a token", async () => {
    const network = fakeNetwork((call) =>
      call.url.includes("/parley-token") ? new Response("", { status: 401 }) : undefined,
    );
    vi.stubGlobal("fetch", network.fetch);
    const errors: unknown[] = [];
    const element = document.createElement("parley-assistant");
    element.addEventListener("parley-error", (event) => errors.push((event as CustomEvent).detail));
    for (const [name, value] of Object.entries({ ...base, mode: "inline" }))
      element.setAttribute(name, value);
    document.body.append(element);
    await until(() => errors.length > 0, "parley-error");
    expect(errors[0]).toMatchObject({ code: "token_unavailable", status: 401 });
    const alert = await until(() => shadow(element).querySelector('[role="alert"]'), "the alert");
    expect(alert.textContent).toContain("could not sign you in");
  });

  it("says parley-error for a missing app-id, without mounting anything", async () => {
    const errors: unknown[] = [];
    const element = document.createElement("parley-assistant");
    element.addEventListener("parley-error", (event) => errors.push((event as CustomEvent).detail));
    element.setAttribute("token-url", "/parley-token");
    document.body.append(element);
    expect(errors).toEqual([expect.objectContaining({ code: "invalid_request" })]);
    expect(element.shadowRoot).toBeNull();
  });
});

describe("<parley-assistant> chat", () => {
  it.each([
    [false, "hides"],
    [true, "shows"],
  ])("with showCost %s %s what a reply and a chat cost", async (showCost) => {
    const network = world({ showCost, sessions: [session("ses_1")] });
    const element = place({ ...base, mode: "inline" });
    const root = shadow(element);
    const reply = await until(
      () =>
        [...root.querySelectorAll("li")].find((li) =>
          li.textContent?.includes("An assistant platform."),
        ),
      "the transcript",
    );
    // The socket went to Parley with the ticket, never a token.
    const url = await until(() => QuietSocket.urls[0], "the socket");
    expect(url).toMatch(/^wss:\/\/parley\.example\/agents\/assistant-agent\/ses_1\?.*ticket=ct_1/);
    expect(url).not.toContain("eu-");
    const load = await until(
      () => network.calls.find((c) => c.path.endsWith("/get-messages")),
      "the transcript's request",
    );
    expect(load.headers.authorization).toBe("Bearer eu-1");
    await until(() => reply.textContent?.includes("Regenerate"), "the reply's footer");
    // Its figures (what the org is billed by) only where the app shows cost.
    expect(reply.textContent?.includes("$0.0042")).toBe(showCost);
    expect(reply.textContent?.includes("15 tokens")).toBe(showCost);

    const chats = [...root.querySelectorAll("button")].find((b) => b.textContent === "Chats");
    chats?.click();
    const row = await until(
      () =>
        [...root.querySelectorAll("nav li")].find((li) => li.textContent?.includes("Chat ses_1")),
      "the chat list",
    );
    expect(row.textContent?.includes("$0.0042")).toBe(showCost);
    // End users cannot delete chats: the list offers rename only.
    expect(row.querySelector('button[aria-label^="Delete"]')).toBeNull();
  });
});

describe("<parley-assistant> opening", () => {
  const shop = {
    welcome: "Hi! Ask me about your orders.",
    suggestions: ["Where is my order?", "I want a refund"],
  };
  const suggestion = (root: ShadowRoot, text: string) =>
    [...root.querySelectorAll<HTMLButtonElement>('ul[aria-label="Suggested prompts"] button')].find(
      (b) => b.textContent === text,
    );

  it("shows the profile's welcome and suggestions before the first message; a suggestion starts the chat with it", async () => {
    const network = world({ opening: shop });
    const root = shadow(place({ ...base, mode: "inline" }));
    await until(() => root.textContent?.includes("Hi! Ask me about your orders."), "the welcome");
    expect(root.textContent).not.toContain("How can I help?");
    const asked = network.calls.find((c) => c.path === "/api/embed/projects/prj_1/opening");
    expect(asked?.headers.authorization).toBe("Bearer eu-1");
    expect(suggestion(root, "I want a refund")).toBeTruthy();
    suggestion(root, "Where is my order?")?.click();
    const socket = await until(() => QuietSocket.sockets[0], "the new chat's socket");
    const request = await until(
      () =>
        socket.sent
          .map((data) => JSON.parse(data) as { type: string; init: { body: string } })
          .find((frame) => frame.type === "cf_agent_use_chat_request"),
      "the suggestion sent",
    );
    expect(request.init.body).toContain("Where is my order?");
    expect(
      network.calls.filter((c) => c.path === "/api/embed/sessions" && c.method === "POST"),
    ).toHaveLength(1);
  });

  it("opens New chat with them too, read once for the project", async () => {
    const network = world({ opening: shop, sessions: [session("ses_1")], messages: [] });
    const root = shadow(place({ ...base, mode: "inline" }));
    // An existing chat with no message yet opens with them.
    await until(() => suggestion(root, "I want a refund"), "the empty chat's suggestions");
    const newChat = [...root.querySelectorAll("button")].find((b) => b.textContent === "New chat");
    newChat?.click();
    await until(
      () => root.querySelector("textarea") && suggestion(root, "Where is my order?"),
      "New chat's opening",
    );
    expect(root.textContent).toContain("Hi! Ask me about your orders.");
    expect(network.calls.filter((c) => c.path.endsWith("/opening"))).toHaveLength(1);
  });

  it("says Parley's own words for an app without a profile, or when the opening cannot be read", async () => {
    for (const opening of [{ welcome: null, suggestions: [] }, 500]) {
      world({ opening });
      const root = shadow(place({ ...base, mode: "inline" }));
      await until(() => root.textContent?.includes("How can I help?"), "Parley's words");
      expect(root.querySelector('ul[aria-label="Suggested prompts"]')).toBeNull();
      document.body.innerHTML = "";
      vi.unstubAllGlobals();
      vi.stubGlobal("WebSocket", QuietSocket);
    }
  });
});

describe("<parley-assistant> tool approvals", () => {
  it("an approved call that ran says the end user approved it ('by you', not the org's label for them) and names the source that acted", async () => {
    const refund = {
      type: "tool-request_refund",
      toolCallId: "c1",
      state: "output-available",
      input: { orderId: "1001" },
      approval: { id: "ap1", approved: true },
      output: { approvedBy: { kind: "end_user", id: "eu_1" }, result: { ok: true } },
      // As the stored transcript keeps a tool source's call: the title names its source.
      title: "request_refund on Acme Shop",
    };
    const denied = {
      ...refund,
      toolCallId: "c2",
      state: "output-denied",
      approval: { id: "ap2", approved: false },
      output: undefined,
    };
    world({
      // The org's label for the end user: never shown to them as someone else.
      sessions: [{ ...session("ses_1"), ownerLabel: "End user: Alice Shopper" }],
      messages: [
        transcript[0],
        { id: "a1", role: "assistant", parts: [refund, { type: "text", text: "Done." }] },
        { id: "u2", role: "user", parts: [{ type: "text", text: "And 1002" }] },
        { id: "a2", role: "assistant", parts: [denied] },
      ],
    });
    const element = place({ ...base, mode: "inline" });
    const root = shadow(element);
    const cards = await until(() => {
      const found = [...root.querySelectorAll("section[aria-label]")].filter((card) =>
        /^(Approved|Denied): /.test(card.getAttribute("aria-label") ?? ""),
      );
      return found.length === 2 ? found : null;
    }, "the approval records");
    expect(cards.map((card) => card.getAttribute("aria-label"))).toEqual([
      "Approved: request_refund on Acme Shop",
      "Denied: request_refund on Acme Shop",
    ]);
    expect(cards[0]?.textContent).toContain("Approved by you: request_refund on Acme Shop (done)");
    expect(cards[1]?.textContent).toContain("Denied by you");
    expect(root.textContent).not.toContain("End user: Alice");
  });
});

describe("<parley-assistant> actions taken", () => {
  const call = (over: Record<string, unknown>) => ({
    id: "tcl_1",
    toolName: "order_status",
    sourceName: "Acme Shop",
    access: "read",
    approved: false,
    status: "ok",
    errorCode: null,
    durationMs: 40,
    priceMicros: 5_000,
    createdAt: "2026-12-06T10:00:00.000Z",
    ...over,
  });

  it.each([
    [false, "request_refund (Acme Shop): done, approved by you"],
    [true, "request_refund (Acme Shop): done, approved by you, $0.005"],
  ])("lists the end user's tool calls in the chat (showCost %s)", async (showCost, first) => {
    const network = world({
      showCost,
      sessions: [session("ses_1")],
      toolCalls: [
        call({ id: "tcl_2", toolName: "request_refund", access: "write", approved: true }),
        call({ status: "timeout", priceMicros: 0 }),
      ],
    });
    const root = shadow(place({ ...base, mode: "inline" }));
    const list = await until(
      () => root.querySelector('[data-testid="actions-taken"]'),
      "the actions taken",
    );
    expect(list.querySelector("summary")?.textContent).toBe("Actions taken (2)");
    expect([...list.querySelectorAll("li")].map((li) => li.textContent)).toEqual([
      first,
      "order_status (Acme Shop): timed out",
    ]);
    const asked = network.calls.find((c) => c.path === "/api/embed/sessions/ses_1/tool-calls");
    expect(list.querySelector("button")).toBeNull();
    expect(asked?.headers.authorization).toBe("Bearer eu-1");
  });

  it("reads the older calls with 'Show more', past the first page", async () => {
    const network = world({
      sessions: [session("ses_1")],
      toolCalls: [
        call({ id: "tcl_3", toolName: "newest" }),
        call({ id: "tcl_2", toolName: "middle" }),
      ],
      olderToolCalls: [call({ id: "tcl_1", toolName: "oldest" })],
    });
    const root = shadow(place({ ...base, mode: "inline" }));
    const list = await until(
      () => root.querySelector('[data-testid="actions-taken"]'),
      "the actions taken",
    );
    const names = () => [...list.querySelectorAll("li code")].map((code) => code.textContent);
    expect(names()).toEqual(["newest", "middle"]);
    expect(list.querySelector("summary")?.textContent).toBe("Actions taken (2+)");
    const more = await until(
      () => [...list.querySelectorAll("button")].find((b) => b.textContent === "Show more"),
      "Show more",
    );
    more.click();
    await until(() => (names().length === 3 ? true : null), "the older page");
    expect(names()).toEqual(["newest", "middle", "oldest"]);
    expect(list.querySelector("summary")?.textContent).toBe("Actions taken (3)");
    expect([...list.querySelectorAll("button")].some((b) => b.textContent === "Show more")).toBe(
      false,
    );
    const older = network.calls.find((c) => c.path.includes("/tool-calls?cursor=tcl_older"));
    expect(older?.headers.authorization).toBe("Bearer eu-1");
  });

  it("shows nothing for a chat without tool calls", async () => {
    const network = world({ sessions: [session("ses_1")] });
    const root = shadow(place({ ...base, mode: "inline" }));
    await until(
      () => network.calls.find((c) => c.path.endsWith("/tool-calls")),
      "the tool calls' request",
    );
    await until(
      () => [...root.querySelectorAll("li")].find((li) => li.textContent?.includes("An assistant")),
      "the transcript",
    );
    expect(root.querySelector('[data-testid="actions-taken"]')).toBeNull();
  });
});

describe("<parley-assistant> limit warning", () => {
  const limit = (over: Record<string, unknown>) => ({
    limit: "end_user_daily",
    period: "day",
    limitMicros: 1_000_000,
    spentMicros: 850_000,
    resetsAt: "2026-12-03T00:00:00.000Z",
    raisedBy: "admins",
    warning: true,
    ...over,
  });

  it.each([
    [
      false,
      "You have used 92% of this assistant's weekly usage limit. It resets on Monday at 00:00 UTC.",
    ],
    [
      true,
      "You have used 92% of this assistant's weekly usage limit ($0.92 of $1.00). It resets on Monday at 00:00 UTC.",
    ],
  ])(
    "with showCost %s warns of the most-used limit past the org's share",
    async (showCost, text) => {
      const network = world({
        showCost,
        sessions: [session("ses_1")],
        limits: [
          limit({}),
          limit({ limit: "project_weekly", period: "week", spentMicros: 920_000 }),
          limit({
            limit: "end_user_monthly",
            period: "month",
            spentMicros: 990_000,
            warning: false,
          }),
        ],
      });
      const root = shadow(place({ ...base, mode: "inline" }));
      const warning = await until(
        () => root.querySelector('[data-testid="limit-warning"]'),
        "the limit warning",
      );
      expect(warning.textContent).toBe(text);
      expect(warning.getAttribute("role")).toBe("status");
      const asked = network.calls.find((c) => c.path === "/api/embed/sessions/ses_1/limits");
      expect(asked?.headers.authorization).toBe("Bearer eu-1");
    },
  );

  it("shows a sub-cent limit with the web app's money rule, not rounded to $0.00", async () => {
    world({
      showCost: true,
      sessions: [session("ses_1")],
      limits: [limit({ limitMicros: 5_000, spentMicros: 4_600 })],
    });
    const root = shadow(place({ ...base, mode: "inline" }));
    const warning = await until(
      () => root.querySelector('[data-testid="limit-warning"]'),
      "the limit warning",
    );
    expect(warning.textContent).toContain("($0.0046 of $0.005)");
  });

  it("says nothing while no limit is past the share", async () => {
    const network = world({ sessions: [session("ses_1")], limits: [limit({ warning: false })] });
    const root = shadow(place({ ...base, mode: "inline" }));
    await until(() => network.calls.find((c) => c.path.endsWith("/limits")), "the limits' request");
    await until(
      () => [...root.querySelectorAll("li")].find((li) => li.textContent?.includes("An assistant")),
      "the transcript",
    );
    expect(root.querySelector('[data-testid="limit-warning"]')).toBeNull();
  });
});

describe("<parley-assistant> chat list", () => {
  it("reaches chats past the newest page through 'Older chats'", async () => {
    world({ sessions: [session("ses_2")], olderSessions: [session("ses_1")] });
    const element = place({ ...base, mode: "inline" });
    const root = shadow(element);
    const button = (text: string) =>
      [...root.querySelectorAll("button")].find((b) => b.textContent === text);
    (await until(() => button("Chats"), "the Chats button")).click();
    await until(
      () => [...root.querySelectorAll("nav li")].find((li) => li.textContent?.includes("ses_2")),
      "the newest page",
    );
    (await until(() => button("Older chats"), "Older chats")).click();
    await until(
      () => [...root.querySelectorAll("nav li")].find((li) => li.textContent?.includes("ses_1")),
      "the older page",
    );
    // The last page: nothing older to offer.
    await until(() => button("Older chats") === undefined || undefined, "no more pages");
    expect([...root.querySelectorAll("nav li")].map((li) => li.textContent)).toEqual([
      expect.stringContaining("ses_2"),
      expect.stringContaining("ses_1"),
    ]);
  });
});

describe("<parley-assistant> streaming", () => {
  it("sends the new message on the socket and renders the streamed reply as markdown", async () => {
    world({ sessions: [session("ses_1")] });
    const element = place({ ...base, mode: "inline" });
    const root = shadow(element);
    await until(() => root.textContent?.includes("An assistant platform."), "the transcript");
    const socket = await until(() => QuietSocket.sockets[0], "the socket");
    await until(() => socket.sent.length > 0, "the resume probe");
    expect(JSON.parse(socket.sent[0] as string).type).toBe("cf_agent_stream_resume_request");

    const box = await until(() => root.querySelector("textarea"), "the message box");
    box.value = "Show me markdown";
    box.dispatchEvent(new Event("input", { bubbles: true }));
    const sendButton = await until(
      () => root.querySelector<HTMLButtonElement>('button[aria-label="Send"]:not([disabled])'),
      "Send enabled",
    );
    sendButton.click();
    const request = await until(
      () =>
        socket.sent
          .map((data) => JSON.parse(data) as { type: string; id: string; init: { body: string } })
          .find((frame) => frame.type === "cf_agent_use_chat_request"),
      "the chat request",
    );
    const body = JSON.parse(request.init.body) as { messages: { parts: { text: string }[] }[] };
    expect(body.messages).toHaveLength(1);
    expect(body.messages[0]?.parts[0]?.text).toBe("Show me markdown");

    const chunk = (value: Record<string, unknown>) =>
      socket.receive({
        type: "cf_agent_use_chat_response",
        id: request.id,
        body: JSON.stringify(value),
        done: false,
      });
    chunk({ type: "start", messageId: "a2" });
    chunk({ type: "text-start", id: "t" });
    chunk({ type: "text-delta", id: "t", delta: "Here is **bold** and " });
    chunk({ type: "text-delta", id: "t", delta: "[a link](https://docs.example/x) <b>raw</b>" });
    chunk({ type: "text-end", id: "t" });
    chunk({
      type: "finish",
      messageMetadata: { tokens: { promptTokens: 3, completionTokens: 4 } },
    });
    socket.receive({ type: "cf_agent_use_chat_response", id: request.id, body: "", done: true });

    const strong = await until(() => root.querySelector("li strong"), "the markdown");
    expect(strong.textContent).toBe("bold");
    const link = root.querySelector<HTMLAnchorElement>('li a[href="https://docs.example/x"]');
    expect(link?.rel).toBe("noopener noreferrer nofollow");
    expect(root.querySelector("li b")).toBeNull();
    await until(() => root.textContent?.includes("Regenerate"), "the reply's footer");
    await until(() => root.querySelector('button[aria-label="Send"]'), "the composer free again");
  });
});

describe("<parley-assistant> theme", () => {
  const rootOf = async (element: HTMLElement) =>
    until(() => shadow(element).querySelector<HTMLElement>(".parley-root"), "the root");

  it("is dark for theme=dark, light for theme=light, and follows the system for auto", async () => {
    world();
    const dark = await rootOf(place({ ...base, theme: "dark" }));
    expect(dark.classList.contains("dark")).toBe(true);
    const light = await rootOf(place({ ...base, theme: "light" }));
    expect(light.classList.contains("dark")).toBe(false);

    let listener: (() => void) | null = null;
    const media = {
      matches: true,
      addEventListener: (_: string, fn: () => void) => {
        listener = fn;
      },
      removeEventListener: () => undefined,
    };
    vi.stubGlobal("matchMedia", () => media);
    const element = place({ ...base, theme: "auto" });
    const auto = await rootOf(element);
    expect(auto.classList.contains("dark")).toBe(true);
    media.matches = false;
    (listener as (() => void) | null)?.();
    await until(() => !auto.classList.contains("dark"), "light after the system changed");

    // Changing the attribute re-themes the same element.
    element.setAttribute("theme", "dark");
    await until(() => auto.classList.contains("dark"), "dark after theme=dark");
  });
});
