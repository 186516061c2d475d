import { fromBase64Url, toBase64Url } from "../auth/encoding.ts";

/**
 * What a queued mail is made from holds secrets (a reset or verification link's token) until it is
 * sent. D1 keeps only the token's hash elsewhere, so the outbox must not keep it readable either:
 * the data is sealed with AES-256-GCM under a key derived (HKDF-SHA-256, its own label) from the
 * `APP_SECRETS_KEY` Worker secret, bound to the outbox row's id. A D1 export or backup taken while
 * a mail waits holds ciphertext; once sent, the row's data is cleared.
 */

const utf8 = new TextEncoder();
const INFO = utf8.encode("parley-mail-outbox-seal-v1");
const VERSION = "v1";
const keys = new Map<string, Promise<CryptoKey>>();

function sealingKey(env: Env): Promise<CryptoKey> {
  const master = env.APP_SECRETS_KEY;
  if (typeof master !== "string" || master.length < 16) {
    throw new Error("APP_SECRETS_KEY is not set (run `pnpm dev` once locally)");
  }
  let key = keys.get(master);
  if (!key) {
    key = (async () => {
      const material = await crypto.subtle.importKey("raw", utf8.encode(master), "HKDF", false, [
        "deriveKey",
      ]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: INFO },
        material,
        { name: "AES-GCM", length: 256 },
        false,
        ["encrypt", "decrypt"],
      );
    })();
    keys.set(master, key);
    key.catch(() => keys.delete(master));
  }
  return key;
}

/** `v1.<base64url(iv || ciphertext)>` of the JSON of `value`, bound to the row `id`. */
export async function sealMailData(env: Env, id: string, value: unknown): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: utf8.encode(id) },
    await sealingKey(env),
    utf8.encode(JSON.stringify(value)),
  );
  const sealed = new Uint8Array(12 + ciphertext.byteLength);
  sealed.set(iv);
  sealed.set(new Uint8Array(ciphertext), 12);
  return `${VERSION}.${toBase64Url(sealed)}`;
}

/** The value sealed for row `id`, or null when it does not open (another key, another row). */
export async function openMailData(env: Env, id: string, sealed: string): Promise<unknown> {
  const [version, body] = sealed.split(".");
  if (version !== VERSION || !body) return null;
  try {
    const bytes = fromBase64Url(body);
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.slice(0, 12), additionalData: utf8.encode(id) },
      await sealingKey(env),
      bytes.slice(12),
    );
    return JSON.parse(new TextDecoder().decode(plain));
  } catch {
    return null;
  }
}
