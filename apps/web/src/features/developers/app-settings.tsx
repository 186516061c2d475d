import type { App } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useId, useState } from "react";
import { toast } from "sonner";
import { RefusalNote, useRefusal } from "../../components/refusal.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { useConfirm } from "../../components/ui/confirm.tsx";
import { refusalText } from "../../lib/refusal.ts";
import { type AppDraft, draftOf, updateInput } from "./app-draft.ts";
import { APP_FIELDS, AppFields } from "./app-fields.tsx";
import { developersApi, devKeys } from "./developers-api.ts";
import { fieldWords } from "./field-words.ts";

/** An app's settings: only what changed is sent (two admins' changes of different fields both stay). */
export function AppSettings({ app }: { app: App }) {
  const id = useId();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const confirm = useConfirm();
  const [draft, setDraft] = useState<AppDraft>(() => draftOf(app));
  const { refusal, refuse, refuseWith, clear, form } = useRefusal();
  const [busy, setBusy] = useState(false);
  const changes = updateInput(app, draft);
  const unchanged = changes.ok && changes.value === null;
  return (
    <Card aria-labelledby={`${id}-title`}>
      <CardHeader
        id={`${id}-title`}
        title="Settings"
        description="Where the assistant may appear, what it runs, and what each end user may spend."
      />
      <CardBody>
        <form
          ref={form}
          noValidate
          className="grid gap-6"
          onSubmit={async (event) => {
            event.preventDefault();
            if (!changes.ok) {
              refuseWith(changes.refusal);
              return;
            }
            if (changes.value === null) return;
            setBusy(true);
            clear();
            try {
              const saved = await developersApi.updateApp(app.id, changes.value);
              queryClient.setQueryData(devKeys.app(app.id), saved);
              void queryClient.invalidateQueries({ queryKey: devKeys.apps(app.orgId) });
              setDraft(draftOf(saved));
              toast.success("App saved");
            } catch (caught) {
              refuse(caught);
            } finally {
              setBusy(false);
            }
          }}
        >
          <AppFields orgId={app.orgId} draft={draft} onChange={setDraft} refusal={refusal} />
          <RefusalNote refusal={refusal} fields={APP_FIELDS} words={fieldWords} />
          <div className="flex flex-wrap justify-between gap-2">
            <Button
              variant="destructive"
              onClick={async () => {
                const sure = await confirm({
                  title: `Delete ${app.name}?`,
                  description:
                    "From now on it verifies no token and its end users' chats stop at once. Its end users stay the org's (their usage keeps their name) until erased.",
                  confirmLabel: "Delete app",
                  destructive: true,
                  typeToConfirm: app.name,
                });
                if (!sure) return;
                try {
                  await developersApi.deleteApp(app.id);
                  void queryClient.invalidateQueries({ queryKey: devKeys.apps(app.orgId) });
                  toast.success(`${app.name} deleted`);
                  await navigate({ to: "/developers" });
                } catch (caught) {
                  toast.error(refusalText(caught));
                }
              }}
            >
              Delete app
            </Button>
            <div className="flex gap-2">
              <Button
                disabled={unchanged || busy}
                onClick={() => {
                  setDraft(draftOf(app));
                  clear();
                }}
              >
                Undo changes
              </Button>
              <Button type="submit" variant="primary" disabled={unchanged || busy}>
                {busy ? "Saving…" : "Save"}
              </Button>
            </div>
          </div>
        </form>
      </CardBody>
    </Card>
  );
}
