// Sets the example host app up against a running Parley, through the public API only, once: an
// owner (with the dev sign-up grant), a project, an app whose allowed origin is the host app's page
// and that offers the project, an API key with the `end_users:token` scope, and the shop's MCP server
// as a tool source whose two tools the app's assistant profile switches on. What it made is kept
// in .parley.json beside this file (git-ignored); delete it to start over.

import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

// HOST_APP_STATE moves it (the browser tests keep theirs in a temporary directory).
const file = process.env.HOST_APP_STATE
  ? pathToFileURL(process.env.HOST_APP_STATE)
  : new URL("./.parley.json", import.meta.url);

async function call(parley, method, path, { token, body } = {}) {
  const response = await fetch(`${parley}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body ? { "content-type": "application/json" } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await response.json().catch(() => null);
  if (!response.ok)
    throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * The sign-up grant arrives when the owner's address is confirmed (docs/2026-12-06-mail.md): under
 * `pnpm dev` the link waits in the development mailbox (PARLEY_MAILBOX, 8025 by default), read here
 * as a person would click it. Elsewhere, the owner confirms it from their mail.
 */
async function confirmAddress(parley, email) {
  const mailbox = (process.env.PARLEY_MAILBOX ?? "http://127.0.0.1:8025").replace(/\/$/, "");
  const query = new URLSearchParams({ to: email, kind: "verify_email", wait: "15000" });
  const found = await fetch(`${mailbox}/api/messages?${query}`)
    .then((r) => r.json())
    .catch(() => null);
  const link = found?.items?.[0]?.links?.[0];
  if (!link) {
    console.log(`host app: confirm ${email} from the mail Parley sent to get the sign-up credits`);
    return;
  }
  await call(parley, "POST", "/api/auth/verify-email", {
    body: { token: new URL(link).hash.slice(1) },
  });
}

/**
 * The shop's MCP server as a tool source of its org, and an assistant profile for the app that
 * switches on its two tools (order status: a read; a refund: a write the shopper approves in the
 * chat). Registering lists the server's tools, so the shop's server must be listening.
 */
async function shopTools(parley, token, { orgId, appId, mcpUrl }) {
  const source = await call(parley, "POST", `/api/orgs/${orgId}/tool-sources`, {
    token,
    body: {
      kind: "mcp",
      name: "Acme Shop orders",
      description: "The signed-in shopper's orders: their status, and refund requests.",
      url: mcpUrl,
    },
  });
  const tools = source.tools
    .filter((tool) => tool.name === "order_status" || tool.name === "request_refund")
    .map((tool) => tool.ref);
  if (tools.length !== 2)
    throw new Error(`the shop's MCP server listed ${JSON.stringify(source.tools)}`);
  const profile = await call(parley, "POST", `/api/orgs/${orgId}/profiles`, {
    token,
    body: {
      name: "Acme Shop assistant",
      instructions:
        "You help shoppers of Acme Shop with their orders. Look an order up before you answer about it. A refund is requested only with the shopper's approval of that exact request.",
      welcome: "Hi! Ask me about your orders.",
      suggestions: ["Where is order 1001?", "I'd like a refund for order 1002"],
      tools,
    },
  });
  await call(parley, "PATCH", `/api/apps/${appId}`, { token, body: { profileId: profile.id } });
  return { sourceId: source.id, profileId: profile.id };
}

/**
 * A set-up made before 2026-12-06 showed each reply's cost to shoppers (`showCost: true`), which no
 * tenant would ship: turned off once, as the owner, through the public API.
 */
async function hideCost(parley, kept) {
  const login = await call(parley, "POST", "/api/auth/login", {
    body: { email: kept.owner.email, password: kept.owner.password },
  });
  await call(parley, "PATCH", `/api/apps/${kept.appId}`, {
    token: login.accessToken,
    body: { showCost: false },
  });
  const updated = { ...kept, showCost: false };
  writeFileSync(file, JSON.stringify(updated, null, 2), { mode: 0o600 });
  return updated;
}

/**
 * Sets the shop up (or finds what it set up before). `onOrg` hears the shop's Parley org id as
 * soon as it is known, before the MCP server is registered: the server's verifier pins it (a
 * token of another org is refused), and registering lists the server's tools as the owner.
 */
export async function setUp({ parley, origin, mcpUrl, onOrg = () => {} }) {
  if (existsSync(file)) {
    let kept = JSON.parse(readFileSync(file, "utf8"));
    if (kept.parley === parley && kept.origin === origin) onOrg(kept.orgId);
    if (kept.parley === parley && kept.origin === origin) {
      if (kept.showCost !== false) kept = await hideCost(parley, kept);
      if (kept.mcpUrl === mcpUrl) return kept;
    }
    if (kept.parley === parley && kept.origin === origin && !kept.sourceId) {
      // Set up before the shop had its MCP server: add it.
      const login = await call(parley, "POST", "/api/auth/login", {
        body: { email: kept.owner.email, password: kept.owner.password },
      });
      const added = {
        ...kept,
        mcpUrl,
        ...(await shopTools(parley, login.accessToken, { ...kept, mcpUrl })),
      };
      writeFileSync(file, JSON.stringify(added, null, 2), { mode: 0o600 });
      return added;
    }
  }
  const email = `host-app-${randomBytes(4).toString("hex")}@example.com`;
  const password = randomBytes(18).toString("base64url");
  const signup = await call(parley, "POST", "/api/auth/signup", {
    body: { email, password, name: "Acme owner", orgName: "Acme Shop" },
  });
  const token = signup.accessToken;
  await confirmAddress(parley, email);
  const orgs = await call(parley, "GET", "/api/orgs", { token });
  const orgId = orgs.items[0].id;
  onOrg(orgId);
  const project = await call(parley, "POST", `/api/orgs/${orgId}/projects`, {
    token,
    body: { name: "Shop assistant", memory: { shop: "Acme Shop", returns: "30 days" } },
  });
  const app = await call(parley, "POST", `/api/orgs/${orgId}/apps`, {
    token,
    body: {
      name: "Acme Shop",
      allowedOrigins: [origin],
      projectIds: [project.id],
      verification: { type: "secret", issuer: origin, audience: "parley" },
      // What a tenant ships: shoppers do not see what each reply cost (the org's billing does).
      showCost: false,
    },
  });
  const key = await call(parley, "POST", `/api/orgs/${orgId}/api-keys`, {
    token,
    body: {
      name: "Acme Shop server",
      scopes: ["end_users:token", "end_users:erase", "usage:read"],
    },
  });
  const tools = await shopTools(parley, token, { orgId, appId: app.id, mcpUrl });
  const kept = {
    parley,
    origin,
    mcpUrl,
    owner: { email, password },
    orgId,
    projectId: project.id,
    appId: app.id,
    apiKey: key.secret,
    showCost: false,
    ...tools,
  };
  writeFileSync(file, JSON.stringify(kept, null, 2), { mode: 0o600 });
  console.log(
    `[host-app] set up: org ${orgId}, app ${app.id}; owner ${email} (see ${file.pathname})`,
  );
  return kept;
}
