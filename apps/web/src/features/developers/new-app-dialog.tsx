import type { AppWithSecret } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { Plus } from "lucide-react";
import { useState } from "react";
import { RefusalNote, useRefusal } from "../../components/refusal.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Dialog, DialogContent, DialogTrigger } from "../../components/ui/dialog.tsx";
import {
  type AppDraft,
  createInput,
  emptyApp,
  emptyVerification,
  type VerificationDraft,
} from "./app-draft.ts";
import { APP_FIELDS, AppFields } from "./app-fields.tsx";
import { SecretOnce } from "./copy-block.tsx";
import { developersApi, devKeys } from "./developers-api.ts";
import { fieldWords } from "./field-words.ts";
import { VerificationFields, verificationFields } from "./verification-fields.tsx";

/**
 * A new app: its settings and how its tokens are verified, checked as the API checks them before
 * sending. A Parley secret is shown once, here, when the app is made.
 */
export function NewAppDialog({ orgId }: { orgId: string }) {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [draft, setDraft] = useState<AppDraft>(emptyApp());
  const [verification, setVerification] = useState<VerificationDraft>(emptyVerification());
  const { refusal, refuse, refuseWith, clear, form } = useRefusal();
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<AppWithSecret | null>(null);
  const reset = () => {
    setDraft(emptyApp());
    setVerification(emptyVerification());
    clear();
    setCreated(null);
  };
  return (
    <Dialog
      open={open}
      onOpenChange={(next) => {
        setOpen(next);
        if (!next) reset();
      }}
    >
      <DialogTrigger asChild>
        <Button variant="primary">
          <Plus aria-hidden="true" />
          New app
        </Button>
      </DialogTrigger>
      <DialogContent
        size="lg"
        title={created ? `${created.name} is ready` : "New app"}
        description={
          created
            ? "Put the assistant on your pages with the snippet on the app's page."
            : "Your product, where your users chat with the assistant. Your server vouches for each user with a short-lived token."
        }
      >
        {created ? (
          <div className="grid gap-4">
            {created.secret ? (
              <SecretOnce
                title="App secret"
                secret={created.secret.secret}
                note={`Keep it on your server: it signs your users' tokens (kid ${created.secret.kid}). It is shown this once; rotate it on the app's page if it is lost.`}
              />
            ) : null}
            <div className="flex justify-end">
              <Button variant="primary" asChild>
                <Link to="/developers/apps/$appId" params={{ appId: created.id }}>
                  Open {created.name}
                </Link>
              </Button>
            </div>
          </div>
        ) : (
          <form
            ref={form}
            noValidate
            className="grid gap-6"
            onSubmit={async (event) => {
              event.preventDefault();
              const input = createInput(draft, verification);
              if (!input.ok) {
                refuseWith(input.refusal);
                return;
              }
              setBusy(true);
              clear();
              try {
                const app = await developersApi.createApp(orgId, input.value);
                void queryClient.invalidateQueries({ queryKey: devKeys.apps(orgId) });
                setCreated(app);
              } catch (caught) {
                refuse(caught);
              } finally {
                setBusy(false);
              }
            }}
          >
            <AppFields orgId={orgId} draft={draft} onChange={setDraft} refusal={refusal} />
            <VerificationFields draft={verification} onChange={setVerification} refusal={refusal} />
            <RefusalNote
              refusal={refusal}
              fields={[...APP_FIELDS, ...verificationFields(verification.type)]}
              words={fieldWords}
            />
            <div className="flex justify-end gap-2">
              <Button onClick={() => setOpen(false)}>Cancel</Button>
              <Button type="submit" variant="primary" disabled={busy}>
                {busy ? "Creating…" : "Create app"}
              </Button>
            </div>
          </form>
        )}
      </DialogContent>
    </Dialog>
  );
}
