import { SuggestedPrompts } from "@parley/chat-ui";
import { useQuery } from "@tanstack/react-query";
import { api } from "../../lib/api.ts";
import { assistantsApi } from "../../lib/assistants-api.ts";
import { orgsApi } from "../../lib/orgs-api.ts";
import { keys } from "../../lib/query.ts";

/**
 * How an empty assistant chat opens: the welcome message and suggested prompts of the profile the
 * session runs (its project's default; issue 29), a click on a suggestion sending it. Without a
 * profile, or until it is read, Parley's own words. The welcome is the tenant's text: shown as
 * typed (never as markup).
 */
export function ChatOpening({
  sessionId,
  send,
}: {
  sessionId: string;
  send: (text: string) => void;
}) {
  const session = useQuery({
    queryKey: keys.session(sessionId),
    queryFn: () => api.session(sessionId),
  });
  const projectId = session.data?.projectId;
  const project = useQuery({
    queryKey: keys.project(projectId ?? ""),
    queryFn: () => orgsApi.project(projectId ?? ""),
    enabled: projectId !== undefined,
  });
  const profileId = project.data?.defaultProfileId ?? null;
  const profile = useQuery({
    queryKey: keys.profile(profileId ?? ""),
    queryFn: () => assistantsApi.profile(profileId ?? ""),
    enabled: profileId !== null,
  });
  const welcome = profile.data?.welcome ?? null;
  const suggestions = profile.data?.suggestions ?? [];
  return (
    <div className="grid justify-items-center gap-4 py-4 text-center">
      <div className="grid justify-items-center gap-2">
        <p className="max-w-lg whitespace-pre-line font-medium text-foreground text-lg">
          {welcome ?? "How can I help?"}
        </p>
        <p className="max-w-md text-muted-foreground text-sm">
          The assistant knows this project's memory. Replies are charged to your organization's
          credits; each one shows what it cost.
        </p>
      </div>
      <SuggestedPrompts suggestions={suggestions} send={send} wide />
    </div>
  );
}
