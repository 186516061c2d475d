import { API_KEY_SCOPES, type ApiKey, type ApiKeyScope, createApiKeySchema } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { KeyRound, Plus } from "lucide-react";
import { useId, useState } from "react";
import { toast } from "sonner";
import { LoadMore } from "../../components/load-more.tsx";
import { FieldMessage, fieldProps, RefusalNote, useRefusal } from "../../components/refusal.tsx";
import { Badge } from "../../components/ui/badge.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { useConfirm } from "../../components/ui/confirm.tsx";
import { Dialog, DialogContent, DialogTrigger } from "../../components/ui/dialog.tsx";
import { Input } from "../../components/ui/input.tsx";
import { EmptyState, ErrorNote, Loading } from "../../components/ui/states.tsx";
import { Table, TBody, Td, THead, Th, Tr } from "../../components/ui/table.tsx";
import { problemsOf, type Refusal, refusalOfProblems, refusalText } from "../../lib/refusal.ts";
import { usePaged } from "../../lib/use-paged.ts";
import { SecretOnce } from "./copy-block.tsx";
import { developersApi, devKeys } from "./developers-api.ts";
import { fieldWords } from "./field-words.ts";
import { checkWith } from "./form-check.ts";

const day = new Intl.DateTimeFormat("en-US", { dateStyle: "medium" });
const minute = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short" });

/** What each scope lets a key do, in words. */
export const SCOPE_WORDS: Record<ApiKeyScope, string> = {
  "end_users:token": "Mint end-user tokens for your users (your server's token endpoint)",
  "sessions:read": "Read the org's chat sessions",
  "usage:read": "Read the org's usage and its CSV",
  "end_users:erase": "Erase an end user of the org's apps",
};

/** A new key's body as the API takes it, or why it would refuse it (expiry in the past too). */
export function keyInput(
  name: string,
  scopes: readonly ApiKeyScope[],
  expires: string,
  now = Date.now(),
):
  | { ok: true; value: { name: string; scopes: ApiKeyScope[]; expiresAt?: string } }
  | {
      ok: false;
      refusal: Refusal;
    } {
  const body = {
    name: name.trim(),
    scopes: API_KEY_SCOPES.filter((scope) => scopes.includes(scope)),
    ...(expires ? { expiresAt: expires } : {}),
  };
  const refusal = checkWith(createApiKeySchema, body);
  if (refusal) {
    const problems = problemsOf(refusal).map((problem) =>
      problem.field === "scopes" ? { field: "scopes", message: "choose at least one" } : problem,
    );
    return { ok: false, refusal: refusalOfProblems(problems) ?? refusal };
  }
  const parsed = createApiKeySchema.parse(body);
  if (parsed.expiresAt != null && parsed.expiresAt <= now) {
    return { ok: false, refusal: { field: "expiresAt", message: "must be in the future" } };
  }
  return { ok: true, value: body };
}

function NewKeyDialog({ orgId }: { orgId: string }) {
  const id = useId();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<ApiKeyScope[]>(["end_users:token"]);
  const [expires, setExpires] = useState("");
  const { refusal, refuse, refuseWith, clear, form, at } = useRefusal();
  const [busy, setBusy] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  return (
    <Dialog
      open={open}
      onOpenChange={(next) => {
        setOpen(next);
        if (!next) {
          setName("");
          setScopes(["end_users:token"]);
          setExpires("");
          clear();
          setSecret(null);
        }
      }}
    >
      <DialogTrigger asChild>
        <Button variant="primary">
          <Plus aria-hidden="true" />
          New API key
        </Button>
      </DialogTrigger>
      <DialogContent
        title={secret ? "Your new API key" : "New API key"}
        description={
          secret
            ? undefined
            : "For your servers only: it acts for the whole org within its scopes. Never put it in a page."
        }
      >
        {secret ? (
          <div className="grid gap-4">
            <SecretOnce
              title="API key"
              secret={secret}
              note="Shown this once: store it in your server's secrets now. Send it as Authorization: Bearer …"
            />
            <div className="flex justify-end">
              <Button variant="primary" onClick={() => setOpen(false)}>
                Done
              </Button>
            </div>
          </div>
        ) : (
          <form
            ref={form}
            noValidate
            className="grid gap-4"
            onSubmit={async (event) => {
              event.preventDefault();
              const input = keyInput(name, scopes, expires);
              if (!input.ok) return refuseWith(input.refusal);
              setBusy(true);
              clear();
              try {
                const created = await developersApi.createApiKey(orgId, input.value);
                setSecret(created.secret);
                void queryClient.invalidateQueries({ queryKey: devKeys.apiKeys(orgId) });
              } catch (caught) {
                refuse(caught);
              } finally {
                setBusy(false);
              }
            }}
          >
            <div className="grid gap-1.5">
              <label htmlFor={`${id}-name`} className="font-medium text-sm">
                Name
              </label>
              <Input
                id={`${id}-name`}
                placeholder="Shop backend"
                value={name}
                onChange={(event) => setName(event.target.value)}
                {...fieldProps(`${id}-name`, at("name"))}
              />
              <FieldMessage id={`${id}-name`} message={at("name")} />
            </div>
            <fieldset className="grid gap-2" {...fieldProps(`${id}-scopes`, at("scopes"))}>
              <legend className="mb-1 font-medium text-sm">Scopes</legend>
              {API_KEY_SCOPES.map((scope) => (
                <label key={scope} className="flex items-start gap-2 text-sm">
                  <input
                    type="checkbox"
                    className="mt-1"
                    checked={scopes.includes(scope)}
                    onChange={(event) =>
                      setScopes(
                        event.target.checked
                          ? [...scopes, scope]
                          : scopes.filter((chosen) => chosen !== scope),
                      )
                    }
                  />
                  <span className="grid">
                    <code className="text-xs">{scope}</code>
                    <span className="text-muted-foreground text-xs">{SCOPE_WORDS[scope]}</span>
                  </span>
                </label>
              ))}
              <FieldMessage id={`${id}-scopes`} message={at("scopes")} />
            </fieldset>
            <div className="grid gap-1.5">
              <label htmlFor={`${id}-expires`} className="font-medium text-sm">
                Expires (optional)
              </label>
              <Input
                id={`${id}-expires`}
                type="date"
                value={expires}
                onChange={(event) => setExpires(event.target.value)}
                {...fieldProps(`${id}-expires`, at("expiresAt"), `${id}-expires-hint`)}
              />
              <span id={`${id}-expires-hint`} className="text-muted-foreground text-xs">
                At 00:00 UTC that day. Empty: until revoked.
              </span>
              <FieldMessage id={`${id}-expires`} message={at("expiresAt")} />
            </div>
            <RefusalNote
              refusal={refusal}
              fields={["name", "scopes", "expiresAt"]}
              words={fieldWords}
            />
            <div className="flex justify-end gap-2">
              <Button onClick={() => setOpen(false)}>Cancel</Button>
              <Button type="submit" variant="primary" disabled={busy}>
                {busy ? "Creating…" : "Create key"}
              </Button>
            </div>
          </form>
        )}
      </DialogContent>
    </Dialog>
  );
}

function status(key: ApiKey, now: number) {
  if (key.revokedAt) return <Badge>Revoked {day.format(new Date(key.revokedAt))}</Badge>;
  if (key.expiresAt && Date.parse(key.expiresAt) <= now)
    return <Badge tone="danger">Expired</Badge>;
  if (key.expiresAt)
    return <Badge tone="warning">Until {day.format(new Date(key.expiresAt))}</Badge>;
  return <Badge tone="success">Active</Badge>;
}

/** The org's server API keys: made with scopes (the key shown once), last use, expiry, revoke. */
export function ApiKeys({ orgId }: { orgId: string }) {
  const id = useId();
  const queryClient = useQueryClient();
  const confirm = useConfirm();
  const { query, items, more, firstPageError } = usePaged(devKeys.apiKeys(orgId), (cursor) =>
    developersApi.apiKeys(orgId, cursor),
  );
  const now = Date.now();
  return (
    <Card aria-labelledby={`${id}-title`}>
      <CardHeader
        id={`${id}-title`}
        title="API keys"
        description="Your servers call Parley with these: mint end-user tokens, read usage and sessions, erase end users."
        actions={<NewKeyDialog orgId={orgId} />}
      />
      <CardBody className="pt-3">
        {query.isPending ? (
          <Loading label="Loading API keys…" />
        ) : firstPageError ? (
          <ErrorNote error={firstPageError} retry={() => void query.refetch()} />
        ) : items.length === 0 ? (
          <EmptyState icon={<KeyRound />} title="No API keys yet">
            Make one for your server's token endpoint (scope end_users:token).
          </EmptyState>
        ) : (
          <>
            <Table>
              <caption className="sr-only">API keys of the org</caption>
              <THead>
                <Tr>
                  <Th>Key</Th>
                  <Th>Scopes</Th>
                  <Th>Last used</Th>
                  <Th>Status</Th>
                  <Th>
                    <span className="sr-only">Actions</span>
                  </Th>
                </Tr>
              </THead>
              <TBody>
                {items.map((key) => (
                  <Tr key={key.id}>
                    <Td>
                      <span className="grid">
                        <span className="font-medium">{key.name}</span>
                        <code className="text-muted-foreground text-xs">{key.prefix}…</code>
                      </span>
                    </Td>
                    <Td>
                      <span className="flex flex-wrap gap-1">
                        {key.scopes.map((scope) => (
                          <Badge key={scope}>{scope}</Badge>
                        ))}
                      </span>
                    </Td>
                    <Td className="whitespace-nowrap">
                      {key.lastUsedAt ? minute.format(new Date(key.lastUsedAt)) : "Never"}
                    </Td>
                    <Td>{status(key, now)}</Td>
                    <Td className="text-right">
                      {key.revokedAt ? null : (
                        <Button
                          size="sm"
                          variant="ghost"
                          aria-label={`Revoke ${key.name}`}
                          onClick={async () => {
                            const sure = await confirm({
                              title: `Revoke ${key.name}?`,
                              description:
                                "Servers using it are refused from their next request. This cannot be undone.",
                              confirmLabel: "Revoke key",
                              destructive: true,
                            });
                            if (!sure) return;
                            try {
                              await developersApi.revokeApiKey(orgId, key.id);
                              toast.success(`${key.name} revoked`);
                              void queryClient.invalidateQueries({
                                queryKey: devKeys.apiKeys(orgId),
                              });
                            } catch (caught) {
                              toast.error(refusalText(caught));
                            }
                          }}
                        >
                          Revoke
                        </Button>
                      )}
                    </Td>
                  </Tr>
                ))}
              </TBody>
            </Table>
            <LoadMore more={more} label="More API keys" />
          </>
        )}
      </CardBody>
    </Card>
  );
}
