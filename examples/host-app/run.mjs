// An example host app: a tenant's own product that signs in its own users and embeds Parley's
// assistant for them. Plain Node, no dependencies. Run it next to a running Parley:
//
//   node examples/host-app/run.mjs           (or: pnpm example; pnpm dev --example starts both)
//
// On first run it sets itself up against Parley through the public API (examples/host-app/setup.mjs:
// an owner, a project, an app allowing this page's origin, an API key with `end_users:token`) and
// keeps what it made in examples/host-app/.parley.json. Then it serves http://localhost:5174, and
// its MCP server (mcp-server.mjs: order status, refunds) at /mcp, registered in Parley as a tool
// source whose two tools the app's assistant profile switches on.

import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { parleyKeys, parleyVerifier, shopMcpHandler, shopOrders } from "./mcp-server.mjs";
import { setUp } from "./setup.mjs";

const PARLEY = (process.env.PARLEY_URL ?? "http://127.0.0.1:8787").replace(/\/$/, "");
const PORT = Number(process.env.HOST_APP_PORT ?? 5174);
const ORIGIN = `http://localhost:${PORT}`;
// The shop's MCP server, as Parley reaches it (registered in Parley as a tool source with exactly
// this URL, which is the audience of the tokens Parley signs for it).
const MCP_URL = `http://127.0.0.1:${PORT}/mcp`;

/** Set once the shop is set up in Parley (after it listens: registering lists its MCP tools). */
let config = null;

// The shop's orders, as its MCP server serves them to Parley for the shopper who is chatting:
// it verifies Parley's identity token against Parley's JWKS, pins the shop's own Parley org (any
// org can register this URL; only `org` says whose user a token names), and acts only as that
// shopper. A real deployment configures its org id (PARLEY_ORG_ID); the example learns it from its
// own set-up (setup.mjs), which created the org, and refuses every token until then.
let verify = null;
function pinOrg(orgId) {
  const configured = process.env.PARLEY_ORG_ID;
  if (configured && configured !== orgId) {
    console.warn(`[host-app] PARLEY_ORG_ID is ${configured}, the set-up's org is ${orgId}`);
  }
  verify = parleyVerifier({
    keys: parleyKeys(PARLEY),
    issuer: process.env.PARLEY_ISSUER ?? "parley",
    audience: MCP_URL,
    org: configured || orgId,
  });
}
if (process.env.PARLEY_ORG_ID) pinOrg(process.env.PARLEY_ORG_ID);
const mcp = shopMcpHandler({
  verify: (authorization) =>
    verify ? verify(authorization) : Promise.reject(new Error("the shop's org is not known yet")),
  orders: shopOrders(),
});

/** This app's own sign-ins: a cookie naming a user of this app (in memory: it is an example). */
const signIns = new Map();

const html = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** What the shop sells: enough to look like a shop, nothing the example depends on. */
const PRODUCTS = [
  { name: "Trail runner", price: "$89.00", hue: 158 },
  { name: "Canvas tote", price: "$24.00", hue: 32 },
  { name: "Merino beanie", price: "$19.50", hue: 262 },
  { name: "Steel bottle", price: "$29.00", hue: 200 },
];

const STYLE = `
  :root{color-scheme:light dark;--bg:#f7f7f5;--card:#fff;--text:#1c1c1a;--muted:#5f5f5a;--line:#e4e4df;--brand:#0a7d5a;--on-brand:#fff}
  @media (prefers-color-scheme:dark){:root{--bg:#121412;--card:#1b1e1c;--text:#ecece8;--muted:#a3a39c;--line:#2c302d;--brand:#3fcf9a;--on-brand:#06231a}}
  *{box-sizing:border-box} body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);color:var(--text);line-height:1.5}
  header{display:flex;align-items:center;gap:1rem;padding:.75rem clamp(1rem,4vw,2.5rem);background:var(--card);border-bottom:1px solid var(--line);flex-wrap:wrap}
  .brand{font-weight:800;font-size:1.15rem;color:var(--brand);text-decoration:none;margin-right:auto}
  nav{display:flex;gap:1rem;font-size:.9rem} nav a{color:var(--muted);text-decoration:none} nav a[aria-current]{color:var(--text);font-weight:600}
  .account{display:flex;align-items:center;gap:.5rem;font-size:.85rem;color:var(--muted);flex-wrap:wrap}
  .account form{display:inline} button{font:inherit;cursor:pointer}
  .ghost{background:none;border:1px solid var(--line);border-radius:999px;padding:.3rem .8rem;color:var(--text)}
  .primary{background:var(--brand);color:var(--on-brand);border:0;border-radius:999px;padding:.55rem 1.2rem;font-weight:600}
  main{max-width:64rem;margin:0 auto;padding:2rem clamp(1rem,4vw,2.5rem) 6rem}
  h1{font-size:1.6rem;margin:0 0 1rem} h2{font-size:1.1rem;margin:2rem 0 .75rem}
  .card{background:var(--card);border:1px solid var(--line);border-radius:14px;padding:1.25rem}
  .order{display:grid;gap:.75rem} .order p{margin:0} .muted{color:var(--muted);font-size:.9rem}
  .steps{display:grid;grid-template-columns:repeat(3,1fr);gap:.5rem;list-style:none;margin:0;padding:0;font-size:.8rem;color:var(--muted)}
  .steps li{border-top:4px solid var(--line);padding-top:.4rem} .steps li.done{border-color:var(--brand);color:var(--text)}
  .grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(10rem,1fr));gap:1rem;list-style:none;margin:0;padding:0}
  @media (max-width:40rem){.account{width:100%}.account .ghost{padding:.2rem .65rem}}
  .product{display:grid;gap:.35rem} .product .art{aspect-ratio:4/3;border-radius:10px}
  .product strong{font-weight:600} footer{text-align:center;color:var(--muted);font-size:.8rem;padding:2rem}
  .signin{max-width:24rem;margin:4rem auto;display:grid;gap:1rem}
  .signin label{display:grid;gap:.35rem;font-weight:600;font-size:.9rem}
  .signin input{font:inherit;padding:.6rem .75rem;border:1px solid var(--line);border-radius:10px;background:var(--bg);color:var(--text)}
  [role=status]{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:.75rem 1rem}
  parley-assistant{--parley-accent:var(--brand);--parley-accent-foreground:var(--on-brand)}
`;

function page(user, { forgotten = false } = {}) {
  const header = `<header><a class="brand" href="/">Acme Shop</a>
      <nav aria-label="Shop"><a href="/" aria-current="page">Shop</a><a href="/">Orders</a><a href="/">Help</a></nav>
      ${
        user
          ? `<div class="account">signed in as ${html(user.name)}
        <form method="post" action="/logout"><button class="ghost">Sign out</button></form>
        <form method="post" action="/forget"><button class="ghost">Delete my data</button></form></div>`
          : ""
      }</header>`;
  const products = PRODUCTS.map(
    (p) => `<li class="card product"><div class="art" aria-hidden="true"
      style="background:linear-gradient(135deg,hsl(${p.hue} 55% 62%),hsl(${p.hue + 40} 60% 42%))"></div>
      <strong>${p.name}</strong><span class="muted">${p.price}</span></li>`,
  ).join("");
  const body = user
    ? `${header}<main><h1>Your orders</h1>
       <section class="card order" aria-label="Order #1001"><p><strong>Order #1001</strong> · Trail runner, size 42</p>
       <p class="muted">On its way: arriving Thursday. Questions? Ask the assistant (bottom right).</p>
       <ol class="steps"><li class="done">Ordered</li><li class="done">Shipped</li><li>Delivered</li></ol></section>
       <h2>Recommended for you</h2><ul class="grid">${products}</ul></main>
       <footer>Acme Shop is an example tenant of Parley.</footer>
       <parley-assistant app-id="${html(config.appId)}" token-url="/parley-token"
         parley-url="${html(PARLEY)}" theme="auto"></parley-assistant>
       <script type="module" src="${html(PARLEY)}/embed/parley-assistant.js"></script>`
    : `${header}<main><div class="signin"><h1>Welcome to Acme Shop</h1>${
        forgotten ? '<p role="status">Your data was deleted.</p>' : ""
      }<form method="post" action="/login" class="card signin" style="margin:0">
         <label>Your name <input name="name" required maxlength="60" autocomplete="name"></label>
         <button class="primary">Sign in</button></form></div></main>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1"><title>Acme Shop</title>
    <style>${STYLE}</style></head><body>${body}</body></html>`;
}

function currentSid(req) {
  return /(?:^|;\s*)host_sid=([A-Za-z0-9_-]+)/.exec(req.headers.cookie ?? "")?.[1] ?? null;
}

function currentUser(req) {
  const sid = currentSid(req);
  return sid ? (signIns.get(sid) ?? null) : null;
}

async function readForm(req) {
  let text = "";
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 4096) break;
  }
  return new URLSearchParams(text);
}

/**
 * The one endpoint the embed calls: for the signed-in user, an end-user access token minted by
 * this app's server with its Parley API key (never sent to the browser). Only this app's own
 * pages may ask (the browser sends their Origin).
 */
async function parleyToken(req, res, user) {
  if (req.headers.origin !== ORIGIN) return send(res, 403, { error: "cross-origin" });
  if (!user) return send(res, 401, { error: "sign in first" });
  const minted = await fetch(`${PARLEY}/api/apps/${config.appId}/end-user-tokens`, {
    method: "POST",
    headers: { authorization: `Bearer ${config.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ sub: user.id, name: user.name }),
  });
  const body = await minted.json();
  if (minted.status !== 201) return send(res, 502, { error: body?.error?.code ?? "parley" });
  return send(res, 200, { accessToken: body.accessToken, expiresIn: body.expiresIn });
}

/**
 * "Delete my data" in the shop: the shop, as the controller of its users' data, asks Parley to
 * erase everything it holds about this user (their chats, their usage's link to them) with its key
 * (`end_users:erase`), then signs them out.
 */
async function forget(res, user, sid) {
  if (!user) return send(res, 401, { error: "sign in first" });
  // The shop's id for its user travels in the body: a URL path ends up in request logs.
  const erased = await fetch(`${PARLEY}/api/apps/${config.appId}/end-users/erase`, {
    method: "POST",
    headers: { authorization: `Bearer ${config.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ externalId: user.id }),
  });
  if (!erased.ok && erased.status !== 404) {
    const body = await erased.json().catch(() => null);
    return send(res, 502, { error: body?.error?.code ?? "parley" });
  }
  signIns.delete(sid);
  res.writeHead(303, { location: "/?forgotten=1", "set-cookie": "host_sid=; Max-Age=0; Path=/" });
  return res.end();
}

function send(res, status, body) {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

const server = createServer(async (req, res) => {
  try {
    const url = new URL(req.url ?? "/", ORIGIN);
    if (url.pathname === "/mcp") return await mcp(req, res);
    if (!config) return send(res, 503, { error: "setting up" });
    const user = currentUser(req);
    if (req.method === "POST" && url.pathname === "/login") {
      const name = (await readForm(req)).get("name")?.trim().slice(0, 60) || "Guest";
      const sid = randomBytes(18).toString("base64url");
      // The user's id in this app: what Parley knows them by (the end-user token's `sub`).
      signIns.set(sid, { id: `shop-user-${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`, name });
      res.writeHead(303, {
        location: "/",
        "set-cookie": `host_sid=${sid}; HttpOnly; SameSite=Lax; Path=/`,
      });
      return res.end();
    }
    if (req.method === "POST" && url.pathname === "/logout") {
      res.writeHead(303, { location: "/", "set-cookie": "host_sid=; Max-Age=0; Path=/" });
      return res.end();
    }
    if (req.method === "POST" && url.pathname === "/forget") {
      return await forget(res, user, currentSid(req));
    }
    if (req.method === "POST" && url.pathname === "/parley-token") {
      return await parleyToken(req, res, user);
    }
    if (req.method === "GET" && url.pathname === "/") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      return res.end(page(user, { forgotten: url.searchParams.has("forgotten") }));
    }
    // No icon: an empty answer, not a 404 in the browser's console.
    if (url.pathname === "/favicon.ico") return res.writeHead(204).end();
    res.writeHead(404).end();
  } catch (error) {
    console.error("[host-app]", error instanceof Error ? error.message : error);
    if (!res.headersSent) send(res, 500, { error: "internal" });
  }
});
await new Promise((resolve) => server.listen(PORT, "127.0.0.1", resolve));
config = await setUp({ parley: PARLEY, origin: ORIGIN, mcpUrl: MCP_URL, onOrg: pinOrg });
console.log(`[host-app] Acme Shop on ${ORIGIN} (app ${config.appId}, MCP server ${MCP_URL})`);
