/** The key that marks "use the local Stripe stand-in" in .dev.vars. */
export const STANDIN_KEY: string;
/** Secrets `pnpm dev` takes from the developer's environment when set there. */
export const FROM_ENVIRONMENT: string[];
/** How each required secret is made for a local run. */
export const DEV_SECRETS: Record<string, () => Promise<string> | string>;
/** wrangler.jsonc as an object (JSON with comments and trailing commas). */
export function readWranglerConfig(file?: string): {
  vars?: Record<string, string>;
  secrets?: { required?: string[] };
  d1_databases?: { binding: string }[];
  send_email?: { name: string }[];
  durable_objects?: { bindings: { name: string }[] };
  ratelimits?: { name: string }[];
  assets?: { binding?: string };
  [key: string]: unknown;
};
/** The secrets the Worker requires, as wrangler.jsonc declares them. */
export function requiredSecrets(): string[];
/** Values for every required secret `existing` lacks, made as `DEV_SECRETS` says. */
export function missingDevSecrets(
  existing?: Record<string, string>,
): Promise<Record<string, string>>;
