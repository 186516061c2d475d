import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEV_SECRETS,
  missingDevSecrets,
  readWranglerConfig,
  requiredSecrets,
} from "../../../../scripts/lib/dev-secrets.mjs";
import { type DevStack, startDevStack } from "../../../../scripts/lib/dev-stack.mjs";

/**
 * Configuration that cannot drift (issue 28.6). `pnpm dev` wrote OPERATOR_SECRET to .dev.vars, but
 * wrangler dev loads from there only the secrets wrangler.jsonc requires, so the operator routes
 * answered 401 locally, and a deploy without the secret warned nobody. Every secret the Worker
 * reads is declared (wrangler.jsonc, its generated types, the README's deploy steps), made by
 * `pnpm dev`, refused loudly when missing, and actually loaded under `pnpm dev`.
 */
const root = path.resolve(import.meta.dirname, "../../../..");
const src = path.join(root, "apps/worker/src");
const wrangler = readWranglerConfig();
/** The list src/env.ts `REQUIRED_SECRETS` repeats for the Worker (src/env.test.ts keeps them equal). */
const REQUIRED_SECRETS = requiredSecrets();

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".test.ts"))
    .map((e) => path.join(e.parentPath, e.name));
}

/** Every name the Worker's code reads from its env: `env.X`, and the keys env.ts's schemas parse. */
async function namesRead(): Promise<Set<string>> {
  const names = new Set<string>();
  for (const file of await sources(src)) {
    const text = await readFile(file, "utf8");
    for (const match of text.matchAll(/\benv\.([A-Z][A-Z0-9_]*)\b/g)) names.add(match[1] ?? "");
  }
  const envTs = await readFile(path.join(src, "env.ts"), "utf8");
  for (const match of envTs.matchAll(/^ {2}([A-Z][A-Z0-9_]+): /gm)) names.add(match[1] ?? "");
  return names;
}

/**
 * Secrets the Worker reads that are not required: each declared by a `declare global { interface
 * Env }` augmentation in the code (wrangler types only knows `secrets.required`). Only the
 * non-default mail transport's token today (mail/config.ts): the default transport needs none,
 * so requiring it would refuse every deploy that does not use it.
 */
async function optionalSecrets(): Promise<string[]> {
  const names: string[] = [];
  for (const file of await sources(src)) {
    const text = await readFile(file, "utf8");
    for (const block of text.matchAll(/declare global \{\s*interface Env \{([^}]*)\}/g)) {
      for (const match of (block[1] ?? "").matchAll(/^\s*([A-Z][A-Z0-9_]*)\?: string;/gm)) {
        names.push(match[1] ?? "");
      }
    }
  }
  return names;
}

/** What wrangler.jsonc declares: vars, secrets and bindings. */
function declared(): Set<string> {
  return new Set([
    ...Object.keys(wrangler.vars ?? {}),
    ...(wrangler.secrets?.required ?? []),
    ...(wrangler.send_email ?? []).map((b) => b.name),
    ...(wrangler.d1_databases ?? []).map((d) => d.binding),
    ...(wrangler.durable_objects?.bindings ?? []).map((b) => b.name),
    ...(wrangler.ratelimits ?? []).map((r) => r.name),
    ...(wrangler.assets?.binding ? [wrangler.assets.binding] : []),
  ]);
}

describe("every secret the Worker reads is declared", () => {
  it("every name the code reads from env is declared in wrangler.jsonc, and every required secret is read", async () => {
    const read = await namesRead();
    const known = declared();
    expect([...read].filter((name) => !known.has(name)).sort()).toEqual([]);
    expect(REQUIRED_SECRETS.filter((name) => !read.has(name))).toEqual([]);
  });

  it("the generated types have each secret, and the README's deploy steps set each", async () => {
    const types = await readFile(path.join(root, "apps/worker/worker-configuration.d.ts"), "utf8");
    const readme = await readFile(path.join(root, "README.md"), "utf8");
    const deploy = readme.split("\n## Deploy\n")[1]?.split("\n## ")[0] ?? "";
    for (const name of REQUIRED_SECRETS) {
      expect(types, name).toMatch(new RegExp(`\\b${name}: string;`));
      expect(deploy, name).toMatch(new RegExp(`\\b${name}\\b`));
    }
  });

  it("an optional secret is read only through its augmentation, and the README's deploy steps say when to set it", async () => {
    const optional = await optionalSecrets();
    expect(optional).toEqual(["MAIL_HTTP_TOKEN"]);
    const readme = await readFile(path.join(root, "README.md"), "utf8");
    const deploy = readme.split("\n## Deploy\n")[1]?.split("\n## ")[0] ?? "";
    for (const name of optional) {
      expect(deploy, name).toMatch(new RegExp(`\\b${name}\\b`));
      expect(REQUIRED_SECRETS, name).not.toContain(name);
    }
  });

  it("`pnpm dev` makes every one", async () => {
    expect(Object.keys(DEV_SECRETS).sort()).toEqual([...REQUIRED_SECRETS].sort());
    const made = await missingDevSecrets({});
    expect(Object.keys(made).sort()).toEqual([...REQUIRED_SECRETS].sort());
  });
});

describe("under `pnpm dev` the Worker has every secret", () => {
  let stack: DevStack;
  beforeAll(async () => {
    stack = await startDevStack({ timeoutMs: 120_000 });
  }, 150_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it("wrangler dev loads each one, and the operator route takes the generated OPERATOR_SECRET (it answered 401)", async () => {
    const log = stack.log();
    expect(log).not.toMatch(/Missing required secrets/);
    for (const name of REQUIRED_SECRETS) expect(log, name).toContain(`env.${name} (`);
    const devVars = await readFile(path.join(root, ".dev.vars"), "utf8");
    const secret = /^OPERATOR_SECRET='([^']+)'$/m.exec(devVars)?.[1] ?? "";
    expect(secret.length).toBeGreaterThanOrEqual(32);
    const signup = await fetch(`${stack.base}/api/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        email: `operator-check-${Date.now()}@example.com`,
        password: "a long enough password",
        name: "Op",
      }),
    });
    const { accessToken } = (await signup.json()) as { accessToken: string };
    const me = await fetch(`${stack.base}/api/me`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    const orgId = ((await me.json()) as { orgs: { id: string }[] }).orgs[0]?.id ?? "";
    const allowance = (bearer: string) =>
      fetch(`${stack.base}/api/operator/orgs/${orgId}/allowance`, {
        method: "PUT",
        headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
        body: JSON.stringify({ amountMicros: 1_000_000, billingDay: 1 }),
      });
    expect((await allowance(secret)).status).toBe(200);
    expect((await allowance(`${secret}x`)).status).toBe(401);
  });
});
