import type { App } from "@parley/shared";

/**
 * The code a tenant pastes to put an app's assistant on their pages: the script tag (or the React
 * component) on the page, and the one endpoint their server adds, which answers the page's
 * `token-url` for the signed-in user. As in examples/host-app: the server mints an end-user token
 * with an API key (`end_users:token`), or signs a token with the app's own verification.
 */
export interface Snippets {
  scriptTag: string;
  react: string;
  serverWithKey: string;
  /** Signing the user's token itself (jose), for an app verified with a Parley secret. */
  serverWithSecret: string | null;
}

const attr = (value: string) => value.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
const js = (value: string) => JSON.stringify(value);

export function snippetsFor(app: App, parleyUrl: string): Snippets {
  const base = parleyUrl.replace(/\/$/, "");
  const scriptTag = [
    `<script type="module" src="${attr(`${base}/embed/parley-assistant.js`)}"></script>`,
    `<parley-assistant app-id="${attr(app.id)}" token-url="/parley-token"></parley-assistant>`,
  ].join("\n");
  const react = [
    `import { ParleyAssistant } from "@parley/react";`,
    "",
    "export function Assistant() {",
    "  return (",
    "    <ParleyAssistant",
    `      appId=${js(app.id)}`,
    `      parleyUrl=${js(base)}`,
    `      tokenUrl="/parley-token"`,
    "    />",
    "  );",
    "}",
  ].join("\n");
  const serverWithKey = [
    "// Your server: POST /parley-token answers your page for the signed-in user.",
    "// PARLEY_API_KEY is an API key of this org with the end_users:token scope.",
    `app.post("/parley-token", async (req, res) => {`,
    "  const minted = await fetch(",
    `    ${js(`${base}/api/apps/${app.id}/end-user-tokens`)},`,
    "    {",
    `      method: "POST",`,
    "      headers: {",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the tenant's code, a template literal.
    "        authorization: `Bearer ${process.env.PARLEY_API_KEY}`,",
    `        "content-type": "application/json",`,
    "      },",
    "      body: JSON.stringify({ sub: req.user.id, name: req.user.name }),",
    "    },",
    "  );",
    "  const { accessToken, expiresIn } = await minted.json();",
    "  res.json({ accessToken, expiresIn });",
    "});",
  ].join("\n");
  const v = app.verification;
  const serverWithSecret =
    v.type === "secret"
      ? [
          `import { SignJWT } from "jose";`,
          "",
          "// Or sign the user's token yourself with the app secret (PARLEY_APP_SECRET).",
          `app.post("/parley-token", async (req, res) => {`,
          "  const token = await new SignJWT({ name: req.user.name })",
          `    .setProtectedHeader({ alg: "HS256" })`,
          "    .setSubject(req.user.id)",
          `    .setIssuer(${js(v.issuer)})`,
          `    .setAudience(${js(v.audience)})`,
          "    .setIssuedAt()",
          `    .setExpirationTime("5m")`,
          "    .sign(new TextEncoder().encode(process.env.PARLEY_APP_SECRET));",
          "  res.json({ token });",
          "});",
        ].join("\n")
      : null;
  return { scriptTag, react, serverWithKey, serverWithSecret };
}
