import { ChatView, type ChatViewProps, previewStatus, useParleyChat } from "@parley/chat-ui";
import { type ReactNode, Suspense, useCallback, useEffect, useRef } from "react";
import { ErrorBoundary } from "../../components/error-boundary.tsx";
import { Loading } from "../../components/ui/states.tsx";
import { api } from "../../lib/api.ts";
import { fetchMessages, takeMessages, takeTicket } from "../../lib/chat-preload.ts";
import { canManage, useSession } from "../../lib/session.tsx";
import { StopAction } from "../billing/stop-action.tsx";

type Agent = "onboarding-agent" | "assistant-agent";

interface ConnectedProps extends Omit<ChatViewProps, "chat"> {
  agent: Agent;
  name: string;
  /** Called each time a turn ends (the session's title and spend may have changed). */
  onTurnEnd?: () => void;
}

function Connected({ agent, name, onTurnEnd, ...view }: ConnectedProps) {
  // The route's loader may have started both already (lib/chat-preload.ts): taken once each.
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
 */
export function AgentChatPane(props: ConnectedProps) {
  return (
    <ErrorBoundary key={`${props.agent}/${props.name}`}>
      <Suspense
        fallback={
          <div className="mx-auto w-full max-w-3xl p-6">
            <Loading label="Connecting…" />
          </div>
        }
      >
        <Connected key={`${props.agent}/${props.name}`} {...props} />
      </Suspense>
    </ErrorBoundary>
  );
}

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
  return (
    <AgentChatPane
      agent="assistant-agent"
      name={sessionId}
      label={label}
      regenerate
      autoFocus
      {...(onTurnEnd ? { onTurnEnd } : {})}
      renderStopAction={(code) => <StopAction code={code} canManage={canManage(org)} />}
      emptyState={
        <div className="grid justify-items-center gap-2 py-16 text-center">
          <p className="font-medium text-lg">How can I help?</p>
          <p className="max-w-md text-muted-foreground text-sm">
            The assistant knows this project's memory. Replies are charged to your organization's
            credits; each one shows what it cost.
          </p>
        </div>
      }
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
