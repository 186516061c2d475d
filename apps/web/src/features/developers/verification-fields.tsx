import { TOKEN_ALGORITHMS, type TokenAlgorithm } from "@parley/shared";
import { useId } from "react";
import { FieldMessage, fieldProps } from "../../components/refusal.tsx";
import { Input, Select, Textarea } from "../../components/ui/input.tsx";
import { problemsOf, type Refusal, refusalAt } from "../../lib/refusal.ts";
import type { VerificationDraft, VerificationType } from "./app-draft.ts";

const TYPES: { value: VerificationType; label: string; hint: string }[] = [
  {
    value: "secret",
    label: "A secret from Parley (HS256)",
    hint: "Parley makes the secret and shows it once; your server signs tokens with it.",
  },
  {
    value: "public_key",
    label: "Your public key",
    hint: "Your server signs with its private key; paste the public key as a JWK.",
  },
  {
    value: "jwks",
    label: "Your JWKS URL",
    hint: "Parley fetches your public keys from an https URL on a public host.",
  },
];

/** The API's fields `VerificationFields` shows at a control for a kind of verification. */
export const verificationFields = (type: VerificationType): string[] =>
  [
    type === "secret" ? null : "alg",
    type === "public_key" ? "jwk" : null,
    type === "jwks" ? "url" : null,
    "issuer",
    "audience",
    "maxTokenLifetimeSeconds",
  ].flatMap((field) => (field === null ? [] : [`verification.${field}`]));

/**
 * How the app's end-user tokens are verified: a secret Parley makes (shown once), the tenant's
 * public key, or its JWKS URL; and the claims every token must carry. Each control shows the
 * refusal (the shared schema's, or the API's) that names its field.
 */
export function VerificationFields({
  draft,
  onChange,
  refusal,
}: {
  draft: VerificationDraft;
  onChange: (next: VerificationDraft) => void;
  refusal: Refusal | null;
}) {
  const id = useId();
  const set = (patch: Partial<VerificationDraft>) => onChange({ ...draft, ...patch });
  const at = (field: string) => refusalAt(refusal, `verification.${field}`);
  return (
    <fieldset className="grid min-w-0 gap-4">
      <legend className="mb-2 font-medium text-sm">Token verification</legend>
      <p className="text-muted-foreground text-xs">
        Only for end-user tokens your server signs itself. If your server gets them from Parley with
        an API key (as the embed snippet and the README do), keep these defaults: Parley never
        checks them then. The issuer and audience are the <code>iss</code> and <code>aud</code>{" "}
        claims your own tokens will carry.
      </p>
      <div className="grid gap-2" role="radiogroup" aria-label="How tokens are verified">
        {TYPES.map((type) => (
          <label key={type.value} className="flex items-start gap-2 text-sm">
            <input
              type="radio"
              name={`${id}-type`}
              className="mt-1"
              checked={draft.type === type.value}
              onChange={() => set({ type: type.value })}
            />
            <span className="grid">
              <span className="font-medium">{type.label}</span>
              <span className="text-muted-foreground text-xs">{type.hint}</span>
            </span>
          </label>
        ))}
      </div>
      {draft.type === "secret" ? null : (
        <div className="grid gap-1.5">
          <label htmlFor={`${id}-alg`} className="font-medium text-sm">
            Algorithm
          </label>
          <Select
            id={`${id}-alg`}
            value={draft.alg}
            onChange={(event) => set({ alg: event.target.value as TokenAlgorithm })}
            {...fieldProps(`${id}-alg`, at("alg"))}
          >
            {TOKEN_ALGORITHMS.map((alg) => (
              <option key={alg} value={alg}>
                {alg}
              </option>
            ))}
          </Select>
          <FieldMessage id={`${id}-alg`} message={at("alg")} />
        </div>
      )}
      {draft.type === "public_key" ? (
        <div className="grid gap-1.5">
          <label htmlFor={`${id}-jwk`} className="font-medium text-sm">
            Public key (JWK)
          </label>
          <Textarea
            id={`${id}-jwk`}
            className="font-mono text-xs"
            rows={5}
            spellCheck={false}
            placeholder='{"kty": "EC", "crv": "P-256", "x": "…", "y": "…"}'
            value={draft.jwk}
            onChange={(event) => set({ jwk: event.target.value })}
            {...fieldProps(`${id}-jwk`, at("jwk"))}
          />
          <FieldMessage id={`${id}-jwk`} message={at("jwk")} prefix={jwkMember(refusal)} />
        </div>
      ) : null}
      {draft.type === "jwks" ? (
        <div className="grid gap-1.5">
          <label htmlFor={`${id}-url`} className="font-medium text-sm">
            JWKS URL
          </label>
          <Input
            id={`${id}-url`}
            type="url"
            placeholder="https://shop.example.com/.well-known/jwks.json"
            value={draft.url}
            onChange={(event) => set({ url: event.target.value })}
            {...fieldProps(`${id}-url`, at("url"))}
          />
          <FieldMessage id={`${id}-url`} message={at("url")} />
        </div>
      ) : null}
      <div className="grid gap-4 sm:grid-cols-2">
        <div className="grid content-start gap-1.5">
          <label htmlFor={`${id}-iss`} className="font-medium text-sm">
            Issuer (iss)
          </label>
          <Input
            id={`${id}-iss`}
            placeholder="https://shop.example.com"
            value={draft.issuer}
            onChange={(event) => set({ issuer: event.target.value })}
            {...fieldProps(`${id}-iss`, at("issuer"))}
          />
          <FieldMessage id={`${id}-iss`} message={at("issuer")} />
        </div>
        <div className="grid content-start gap-1.5">
          <label htmlFor={`${id}-aud`} className="font-medium text-sm">
            Audience (aud)
          </label>
          <Input
            id={`${id}-aud`}
            value={draft.audience}
            onChange={(event) => set({ audience: event.target.value })}
            {...fieldProps(`${id}-aud`, at("audience"))}
          />
          <FieldMessage id={`${id}-aud`} message={at("audience")} />
        </div>
      </div>
      <div className="grid gap-1.5 sm:max-w-56">
        <label htmlFor={`${id}-life`} className="font-medium text-sm">
          Longest token life (seconds)
        </label>
        <Input
          id={`${id}-life`}
          inputMode="numeric"
          value={draft.maxTokenLifetimeSeconds}
          onChange={(event) => set({ maxTokenLifetimeSeconds: event.target.value })}
          {...fieldProps(`${id}-life`, at("maxTokenLifetimeSeconds"))}
        />
        <FieldMessage id={`${id}-life`} message={at("maxTokenLifetimeSeconds")} />
      </div>
    </fieldset>
  );
}

/** "The member crv: " for a refusal inside the JWK (`verification.jwk.crv`). */
function jwkMember(refusal: Refusal | null): string | undefined {
  const field = problemsOf(refusal).find((problem) =>
    problem.field?.startsWith("verification.jwk"),
  )?.field;
  const member = field?.startsWith("verification.jwk.")
    ? field.slice("verification.jwk.".length)
    : undefined;
  return member ? `The key's "${member}" ` : undefined;
}
