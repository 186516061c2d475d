import {
  type App,
  DEFAULT_SECRET_OVERLAP_SECONDS,
  type NewAppSecret,
  rotateAppSecretSchema,
} from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import { RefusalNote, useRefusal } from "../../components/refusal.tsx";
import { Badge } from "../../components/ui/badge.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { useConfirm } from "../../components/ui/confirm.tsx";
import { Select } from "../../components/ui/input.tsx";
import { type VerificationDraft, verificationDraftOf, verificationInput } from "./app-draft.ts";
import { SecretOnce } from "./copy-block.tsx";
import { developersApi, devKeys } from "./developers-api.ts";
import { fieldWords } from "./field-words.ts";
import { checkWith } from "./form-check.ts";
import { VerificationFields, verificationFields } from "./verification-fields.tsx";

const when = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short" });

const OVERLAPS: { seconds: number; label: string }[] = [
  { seconds: 0, label: "None: the old secret stops now" },
  { seconds: 15 * 60, label: "15 minutes" },
  { seconds: DEFAULT_SECRET_OVERLAP_SECONDS, label: "1 hour" },
  { seconds: 86_400, label: "1 day" },
  { seconds: 7 * 86_400, label: "7 days (the longest)" },
];

const KINDS = { secret: "Parley secret (HS256)", public_key: "Your public key", jwks: "Your JWKS" };

/**
 * How the app's tokens are verified, and its secrets: rotation makes a new one (shown once) and
 * keeps the current one valid for the overlap chosen, so the tenant deploys the new one first.
 */
export function VerificationCard({ app }: { app: App }) {
  const id = useId();
  const queryClient = useQueryClient();
  const confirm = useConfirm();
  const [overlap, setOverlap] = useState(DEFAULT_SECRET_OVERLAP_SECONDS);
  const [shown, setShown] = useState<NewAppSecret | null>(null);
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState<VerificationDraft>(() => verificationDraftOf(app));
  const { refusal, refuse, refuseWith, clear, form } = useRefusal();
  const [busy, setBusy] = useState(false);
  const v = app.verification;
  const refreshApp = (next: App) => {
    queryClient.setQueryData(devKeys.app(app.id), next);
    void queryClient.invalidateQueries({ queryKey: devKeys.apps(app.orgId) });
  };
  return (
    <Card aria-labelledby={`${id}-title`}>
      <CardHeader
        id={`${id}-title`}
        title="Token verification"
        description="Your server signs a short-lived token for each of your users; Parley checks it this way."
        actions={
          editing ? null : (
            <Button size="sm" onClick={() => setEditing(true)}>
              Change
            </Button>
          )
        }
      />
      <CardBody className="grid gap-4">
        <dl className="grid gap-x-6 gap-y-2 text-sm sm:grid-cols-[auto_1fr]">
          <dt className="text-muted-foreground">Kind</dt>
          <dd>
            {KINDS[v.type]} {v.type === "secret" ? null : <Badge>{v.alg}</Badge>}
          </dd>
          <dt className="text-muted-foreground">Issuer and audience</dt>
          <dd className="break-all">
            <code>{v.issuer}</code> · <code>{v.audience}</code>
          </dd>
          <dt className="text-muted-foreground">Longest token life</dt>
          <dd>{v.maxTokenLifetimeSeconds} seconds</dd>
          {v.type === "jwks" ? (
            <>
              <dt className="text-muted-foreground">JWKS URL</dt>
              <dd className="break-all">{v.url}</dd>
            </>
          ) : null}
        </dl>
        {shown ? (
          <SecretOnce
            title="New app secret"
            secret={shown.secret}
            note={`Shown this once (kid ${shown.kid}). Deploy it to your server; the previous secret works until its overlap ends.`}
          />
        ) : null}
        {v.type === "secret" ? (
          <div className="grid gap-3">
            <ul className="grid gap-1 text-sm">
              {v.secrets.map((secret) => (
                <li key={secret.kid} className="flex flex-wrap items-center gap-2">
                  <code className="break-all">{secret.kid}</code>
                  {secret.expiresAt ? (
                    <Badge tone="warning">until {when.format(new Date(secret.expiresAt))}</Badge>
                  ) : (
                    <Badge tone="success">current</Badge>
                  )}
                  <span className="text-muted-foreground text-xs">
                    made {when.format(new Date(secret.createdAt))}
                  </span>
                </li>
              ))}
            </ul>
            <div className="flex flex-wrap items-end gap-2">
              <div className="grid gap-1.5">
                <label htmlFor={`${id}-overlap`} className="font-medium text-sm">
                  The current secret keeps working for
                </label>
                <Select
                  id={`${id}-overlap`}
                  value={String(overlap)}
                  onChange={(event) => setOverlap(Number(event.target.value))}
                >
                  {OVERLAPS.map((option) => (
                    <option key={option.seconds} value={option.seconds}>
                      {option.label}
                    </option>
                  ))}
                </Select>
              </div>
              <Button
                disabled={busy}
                onClick={async () => {
                  const problem = checkWith(rotateAppSecretSchema, { overlapSeconds: overlap });
                  if (problem) return refuseWith(problem);
                  const sure = await confirm({
                    title: "Rotate the app secret?",
                    description:
                      overlap === 0
                        ? "Tokens signed with the current secret are refused from now on."
                        : "A new secret is shown once; the current one keeps working for the overlap you chose. Any older secret stops now.",
                    confirmLabel: "Rotate secret",
                    destructive: overlap === 0,
                  });
                  if (!sure) return;
                  setBusy(true);
                  clear();
                  try {
                    const rotated = await developersApi.rotateSecret(app.id, overlap);
                    setShown(rotated.secret);
                    refreshApp({ ...app, verification: { ...v, secrets: rotated.secrets } });
                  } catch (caught) {
                    refuse(caught);
                  } finally {
                    setBusy(false);
                  }
                }}
              >
                Rotate secret
              </Button>
            </div>
          </div>
        ) : null}
        {editing ? (
          <form
            ref={form}
            noValidate
            className="grid gap-4 border-border border-t pt-4"
            onSubmit={async (event) => {
              event.preventDefault();
              const input = verificationInput(draft);
              if (!input.ok) return refuseWith(input.refusal);
              setBusy(true);
              clear();
              try {
                const saved = await developersApi.updateApp(app.id, input.value);
                refreshApp(saved);
                setShown(saved.secret ?? null);
                setEditing(false);
              } catch (caught) {
                refuse(caught);
              } finally {
                setBusy(false);
              }
            }}
          >
            <VerificationFields draft={draft} onChange={setDraft} refusal={refusal} />
            <p className="text-muted-foreground text-sm">
              Saving replaces the verification whole: leaving a Parley secret drops its secrets;
              coming to one makes a new secret, shown once.
            </p>
            <div className="flex justify-end gap-2">
              <Button
                onClick={() => {
                  setEditing(false);
                  setDraft(verificationDraftOf(app));
                  clear();
                }}
              >
                Cancel
              </Button>
              <Button type="submit" variant="primary" disabled={busy}>
                Save verification
              </Button>
            </div>
          </form>
        ) : null}
        <RefusalNote
          refusal={refusal}
          fields={editing ? verificationFields(draft.type) : []}
          words={fieldWords}
        />
      </CardBody>
    </Card>
  );
}
