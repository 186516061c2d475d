import { SuggestedPrompts } from "@parley/chat-ui/light";
import type { ChatOpening, EmbedClient } from "@parley/embed-core";
import { useEffect, useState } from "react";

/**
 * The opening of each of the app's projects the panel showed, read once per panel
 * (`GET /api/embed/projects/:id/opening`): `undefined` while it is read, `null` when it could not
 * be (Parley's own words then; an empty chat is no place for an error).
 */
export function useOpening(
  client: EmbedClient,
  projectId: string | undefined,
): ChatOpening | null | undefined {
  const [known, setKnown] = useState<Record<string, ChatOpening | null>>({});
  const shown = projectId === undefined ? null : known[projectId];
  useEffect(() => {
    if (projectId === undefined || shown !== undefined) return;
    let live = true;
    void client.opening(projectId).then((result) => {
      if (live) setKnown((all) => ({ ...all, [projectId]: result.ok ? result.data : null }));
    });
    return () => {
      live = false;
    };
  }, [client, projectId, shown]);
  return shown;
}

/**
 * How an empty chat opens, as a member's chat does with the same profile: the profile's welcome
 * (the tenant's text, shown as typed, never as markup) and its suggested prompts, a click sending
 * one. Without a profile, Parley's own words; nothing while the opening is read, so the words do
 * not change under the reader's eyes.
 */
export function Opening({
  opening,
  send,
}: {
  opening: ChatOpening | null | undefined;
  send: (text: string) => void;
}) {
  if (opening === undefined) return <div data-testid="opening-loading" />;
  const suggestions = opening?.suggestions ?? [];
  return (
    <div className="grid w-full justify-items-center gap-3 p-4 text-center">
      <p className="max-w-full whitespace-pre-line text-pretty text-foreground text-sm [overflow-wrap:anywhere]">
        {opening?.welcome ?? "How can I help?"}
      </p>
      <SuggestedPrompts suggestions={suggestions} send={send} />
    </div>
  );
}
