import { openAppSecret, sealAppSecret } from "../auth/app-secrets.ts";

/**
 * A tool source's static credential, sealed as app secrets are (auth/app-secrets.ts: AES-256-GCM
 * under a key derived from APP_SECRETS_KEY), bound to the source's id, so a sealed value copied
 * onto another source's row does not open. D1 holds ciphertext only; the API never returns it.
 */
const KID = "tool-credential";

export const sealCredential = (env: Env, sourceId: string, value: string): Promise<string> =>
  sealAppSecret(env, sourceId, KID, value);

export async function openCredential(
  env: Env,
  sourceId: string,
  sealed: string,
): Promise<string | null> {
  const bytes = await openAppSecret(env, sourceId, KID, sealed);
  return bytes === null ? null : new TextDecoder().decode(bytes);
}
