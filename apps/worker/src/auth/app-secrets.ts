import { fromBase64Url, toBase64Url } from "./encoding.ts";

/**
 * The HS256 signing secrets of apps (docs/2026-12-02-apps-and-end-users.md). Verifying an HMAC needs
 * the key itself, so unlike a password or a refresh token it cannot be kept as a hash. It is kept
 * sealed: AES-256-GCM under a key derived (HKDF-SHA-256) from the `APP_SECRETS_KEY` Worker secret,
 * which D1 never sees, with the app id and the secret's kid as additional data, so a sealed value
 * copied onto another app's row (or another kid) does not open. A D1 export, backup or SQL
 * injection read yields ciphertext only. The `v1.` prefix names the sealing key's generation, so
 * the Worker secret can be replaced later by re-sealing under a `v2`.
 */

const utf8 = new TextEncoder();
const SEAL_INFO = utf8.encode("parley-app-secret-seal-v1");
const VERSION = "v1";

/** Visible prefix: a secret scanner (or a person) can tell what leaked. */
export const APP_SECRET_PREFIX = "prly_as_";

/** A new signing secret: 32 random bytes (256 bits, the HS256 key size) behind the prefix. */
export function newAppSecret(): string {
  return `${APP_SECRET_PREFIX}${toBase64Url(crypto.getRandomValues(new Uint8Array(32)))}`;
}

const keyCache = new Map<string, Promise<CryptoKey>>();

function sealingKey(env: Env): Promise<CryptoKey> {
  const master = env.APP_SECRETS_KEY;
  // Fails loudly where it is needed, rather than sealing under an empty key.
  if (typeof master !== "string" || master.length < 16) {
    throw new Error("APP_SECRETS_KEY is not set (run `pnpm dev` once locally)");
  }
  let key = keyCache.get(master);
  if (!key) {
    key = (async () => {
      const material = await crypto.subtle.importKey("raw", utf8.encode(master), "HKDF", false, [
        "deriveKey",
      ]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: SEAL_INFO },
        material,
        { name: "AES-GCM", length: 256 },
        false,
        ["encrypt", "decrypt"],
      );
    })();
    keyCache.set(master, key);
    key.catch(() => keyCache.delete(master));
  }
  return key;
}

const boundTo = (appId: string, kid: string) => utf8.encode(`${appId}\n${kid}`);

/** `v1.<base64url(iv || ciphertext)>`, bound to the app and the kid. */
export async function sealAppSecret(
  env: Env,
  appId: string,
  kid: string,
  secret: string,
): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: boundTo(appId, kid) },
    await sealingKey(env),
    utf8.encode(secret),
  );
  const sealed = new Uint8Array(iv.byteLength + ciphertext.byteLength);
  sealed.set(iv);
  sealed.set(new Uint8Array(ciphertext), iv.byteLength);
  return `${VERSION}.${toBase64Url(sealed)}`;
}

/** The HMAC key bytes of a sealed secret, or null when it does not open for this app and kid. */
export async function openAppSecret(
  env: Env,
  appId: string,
  kid: string,
  sealed: string,
): Promise<Uint8Array | null> {
  const [version, body] = sealed.split(".");
  if (version !== VERSION || !body) return null;
  try {
    const bytes = fromBase64Url(body);
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.slice(0, 12), additionalData: boundTo(appId, kid) },
      await sealingKey(env),
      bytes.slice(12),
    );
    return new Uint8Array(plain);
  } catch {
    return null;
  }
}
