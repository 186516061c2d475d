import type { App } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { Play } from "lucide-react";
import { useEffect, useId, useRef, useState } from "react";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { ErrorNote } from "../../components/ui/states.tsx";
import { developersApi, devKeys } from "./developers-api.ts";
import { loadEmbedScript } from "./embed-script.ts";

/** While the preview runs, how often the app's End users list is brought up to date. */
export const END_USERS_REFRESH_MS = 15_000;

/** What the element takes as its token source (packages/embed `getToken`). */
type TokenSource = () => Promise<{ accessToken: string; expiresIn: number }>;

/**
 * The assistant as the app's end users see it: the real `<parley-assistant>` (the script tenants
 * load), inline, chatting as the viewer's own preview end user of the app
 * (`POST /api/apps/:appId/preview-token`): the app's projects, profile, limits and cost display.
 * Started on demand: its chats are charged to the org like any end user's.
 */
export function AppPreview({ app, parleyUrl }: { app: App; parleyUrl: string }) {
  const id = useId();
  const host = useRef<HTMLDivElement>(null);
  const [started, setStarted] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const queryClient = useQueryClient();
  // The preview's chats are the viewer's preview end user's: the End users list below shows them
  // (their row, calls and cost) without a reload. The element says when it is ready (the end user
  // exists by then) but not when a reply is done, so the list is also refreshed while the preview
  // runs and when focus leaves it (the person is done chatting for now).
  useEffect(() => {
    if (!started) return;
    const box = host.current;
    const refresh = () =>
      void queryClient.invalidateQueries({ queryKey: devKeys.endUsers(app.id) });
    const timer = setInterval(refresh, END_USERS_REFRESH_MS);
    box?.addEventListener("parley-ready", refresh);
    box?.addEventListener("focusout", refresh);
    return () => {
      clearInterval(timer);
      box?.removeEventListener("parley-ready", refresh);
      box?.removeEventListener("focusout", refresh);
    };
  }, [started, app.id, queryClient]);
  useEffect(() => {
    const box = host.current;
    if (!started || !box) return;
    const element = document.createElement("parley-assistant") as HTMLElement & {
      getToken?: TokenSource;
    };
    element.getToken = async () => {
      const minted = await developersApi.previewToken(app.id);
      return { accessToken: minted.accessToken, expiresIn: minted.expiresIn };
    };
    element.setAttribute("app-id", app.id);
    element.setAttribute("parley-url", parleyUrl);
    element.setAttribute("mode", "inline");
    element.setAttribute(
      "theme",
      document.documentElement.classList.contains("dark") ? "dark" : "light",
    );
    element.style.display = "block";
    element.style.height = "min(36rem, 75dvh)";
    box.append(element);
    loadEmbedScript(parleyUrl).catch(setError);
    return () => element.remove();
  }, [started, app.id, parleyUrl]);
  return (
    <Card aria-labelledby={`${id}-title`}>
      <CardHeader
        id={`${id}-title`}
        title="Live preview"
        description="The assistant as your end users see it, with this app's projects, profile, limits and cost setting. You chat as your own preview end user; its chats are charged like any end user's."
      />
      <CardBody className="grid gap-3">
        {started ? null : (
          <div>
            <Button onClick={() => setStarted(true)}>
              <Play aria-hidden="true" />
              Start the preview
            </Button>
          </div>
        )}
        <ErrorNote error={error} />
        <div ref={host} className="min-w-0 overflow-hidden rounded-lg" data-testid="app-preview" />
      </CardBody>
    </Card>
  );
}
