import {
  ChatView,
  type ChatViewProps,
  type CitationView,
  isBillingRefusal,
  type OpenSource,
  previewStatus,
  useParleyChat,
} from "@parley/chat-ui";
import type { CitedPassage } from "@parley/shared";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import {
  type ReactNode,
  Suspense,
  startTransition,
  useCallback,
  useEffect,
  useRef,
  useState,
} from "react";
import { ErrorBoundary } from "../../components/error-boundary.tsx";
import { Loading } from "../../components/ui/states.tsx";
import { api, errorMessage } from "../../lib/api.ts";
import {
  fetchMessages,
  preloadChat,
  preloadSettled,
  takeMessages,
  takeTicket,
} from "../../lib/chat-preload.ts";
import { keys } from "../../lib/query.ts";
import { canManage, useSession } from "../../lib/session.tsx";
import { ChatOpening } from "../assistants/chat-opening.tsx";
import { LimitStop } from "../billing/limit-stop.tsx";
import { LimitWarning } from "../billing/limit-warning.tsx";
import { StopAction } from "../billing/stop-action.tsx";

type Agent = "onboarding-agent" | "assistant-agent";

interface ConnectedProps extends Omit<ChatViewProps, "chat"> {
  agent: Agent;
  name: string;
  /** Called each time a turn ends (the session's title and spend may have changed). */
  onTurnEnd?: () => void;
}

function Connected({ agent, name, onTurnEnd, ...view }: ConnectedProps) {
  // Started before the chat mounted (lib/chat-preload.ts): taken once each, by whichever render
  // attempt asks first; later connects and reloads fetch their own.
  const connectTicket = useCallback(
    () => takeTicket(agent, name) ?? api.connectTicket(agent, name),
    [agent, name],
  );
  const loadMessages = useCallback(
    () => takeMessages(agent, name) ?? fetchMessages(agent, name),
    [agent, name],
  );
  const chat = useParleyChat({ agent, name, connectTicket, loadMessages });
  const wasBusy = useRef(chat.busy);
  useEffect(() => {
    if (wasBusy.current && !chat.busy) onTurnEnd?.();
    wasBusy.current = chat.busy;
  }, [chat.busy, onTurnEnd]);
  return <ChatView chat={chat} {...view} />;
}

/**
 * One agent chat: its socket, transcript and composer, filling the parent's height. Keyed by the
 * chat's address so another session starts fresh; a transcript that fails to load stays in here.
 *
 * The chat mounts only once its ticket and transcript are in (the route's loader may have asked
 * for both already), and in a transition, under a boundary that already shows "Connecting…" as
 * content. Mounted straight under `<Suspense>` it would suspend, and React reveals what a Suspense
 * retry brings at most once per 300 ms after any fallback on the page came or went (its fallback
 * throttle): measured, a loaded transcript waited about 300 ms more to show.
 */
export function AgentChatPane(props: ConnectedProps) {
  const { agent, name } = props;
  const key = `${agent}/${name}`;
  const [ready, setReady] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    preloadChat(agent, name);
    // Settled either way: a failure is thrown by the chat itself, into the error boundary.
    void preloadSettled(agent, name).then(() => {
      if (live) startTransition(() => setReady(`${agent}/${name}`));
    });
    return () => {
      live = false;
    };
  }, [agent, name]);
  const connecting = (
    <div className="mx-auto w-full max-w-3xl p-6">
      <Loading label="Connecting…" />
    </div>
  );
  return (
    <ErrorBoundary key={key}>
      <Suspense fallback={connecting}>
        {ready === key ? <Connected key={key} {...props} /> : connecting}
      </Suspense>
    </ErrorBoundary>
  );
}

/**
 * A reply's source, opened (features/knowledge): the cited passage as the document has it now,
 * or, once the document was replaced, why not (the dialog then keeps the reply's quote).
 */
export const openSource: OpenSource = async (citation: CitationView) => {
  const enc = encodeURIComponent;
  try {
    // Not through lib/knowledge-api.ts: the chat's pages need this one call, not the documents'.
    // The passage alone (the content route would send the whole document, up to 2 MiB).
    const passage = await api.get<CitedPassage>(
      `/api/documents/${enc(citation.documentId)}/passages/${enc(citation.chunkId)}?version=${citation.version}`,
    );
    return {
      documentName: passage.documentName,
      version: passage.version,
      heading: passage.heading,
      text: passage.text,
    };
  } catch (error) {
    throw new Error(errorMessage(error));
  }
};

/** An assistant session's chat: paid replies with their cost, Regenerate, the stop actions. */
export function AssistantChat({
  sessionId,
  onTurnEnd,
  label = "Assistant chat",
}: {
  sessionId: string;
  onTurnEnd?: () => void;
  label?: string;
}) {
  const { org } = useSession();
  const queryClient = useQueryClient();
  const orgId = org?.id;
  // Each turn adds to the day's spend: the limit warning (and any billing view) reads it again.
  const turnEnded = useCallback(() => {
    if (orgId) void queryClient.invalidateQueries({ queryKey: keys.billing(orgId) });
    onTurnEnd?.();
  }, [queryClient, orgId, onTurnEnd]);
  // The session's project (the page has read it already): a project's limit leads to its setting.
  const record = useQuery({
    queryKey: keys.session(sessionId),
    queryFn: () => api.session(sessionId),
  }).data;
  const projectId = record?.projectId;
  return (
    <AgentChatPane
      agent="assistant-agent"
      name={sessionId}
      label={label}
      regenerate
      autoFocus
      onTurnEnd={turnEnded}
      // Only a session's owner answers its approvals: the record names them.
      approver={record?.ownerLabel}
      renderStatus={() => <LimitWarning sessionId={sessionId} />}
      renderRefusal={(refusal) =>
        isBillingRefusal(refusal) ? (
          <LimitStop refusal={refusal} sessionId={sessionId} projectId={projectId} />
        ) : null
      }
      renderStopAction={(code) => <StopAction code={code} canManage={canManage(org)} />}
      // The profile's welcome and suggested prompts (features/assistants/chat-opening.tsx).
      emptyState={(send) => <ChatOpening sessionId={sessionId} send={send} />}
      openSource={openSource}
    />
  );
}

/** The project's free onboarding preview: a few free turns, then a way into a paid session. */
export function OnboardingChat({
  projectId,
  newChat,
}: {
  projectId: string;
  /** The call to action once the preview is used up. */
  newChat: ReactNode;
}) {
  return (
    <AgentChatPane
      agent="onboarding-agent"
      name={projectId}
      label="Onboarding preview chat"
      // Inside a card: the card's own surface, not the page's.
      className="bg-transparent"
      closedReason={(messages) =>
        previewStatus(messages).exhausted ? "The free preview is over." : null
      }
      renderStatus={(messages) => {
        const status = previewStatus(messages);
        if (status.exhausted) {
          return (
            <div
              role="status"
              className="flex flex-wrap items-center justify-between gap-3 rounded-md border border-border bg-muted px-3 py-2 text-sm"
            >
              <span>The free preview is over. Keep going in an assistant chat.</span>
              {newChat}
            </div>
          );
        }
        return status.freeTurnsLeft === null ? null : (
          <p role="status" className="text-muted-foreground text-xs">
            {status.freeTurnsLeft} free {status.freeTurnsLeft === 1 ? "turn" : "turns"} left
          </p>
        );
      }}
      emptyState={
        <div className="grid justify-items-center gap-2 py-10 text-center">
          <p className="font-medium">Try the assistant for free</p>
          <p className="max-w-sm text-muted-foreground text-sm">
            This preview is shared by the project's members and uses the project's memory.
          </p>
        </div>
      }
    />
  );
}
