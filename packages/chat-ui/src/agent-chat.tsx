import { type ReactNode, Suspense } from "react";
import { ChatView, type ChatViewProps } from "./chat-view.tsx";
import { type UseParleyChatOptions, useParleyChat } from "./use-parley-chat.ts";

export type AgentChatProps = UseParleyChatOptions &
  Omit<ChatViewProps, "chat"> & {
    /** Shown while the socket opens and the transcript loads. */
    fallback?: ReactNode;
  };

function ConnectedChat({
  agent,
  name,
  connectTicket,
  loadMessages,
  host,
  ...view
}: Omit<AgentChatProps, "fallback">) {
  const chat = useParleyChat({ agent, name, connectTicket, loadMessages, host });
  return <ChatView chat={chat} {...view} />;
}

/**
 * A connected chat in one element: useParleyChat under its own Suspense ("Connecting…" while the
 * transcript loads) rendered by ChatView. Put it under the app's error boundary: a transcript that
 * fails to load throws. Give it a `key` of the chat address so another chat starts fresh.
 */
export function AgentChat({ fallback, ...props }: AgentChatProps) {
  return (
    <Suspense
      fallback={
        fallback ?? (
          <div className="flex h-full min-h-0 items-center justify-center">
            <p role="status" className="text-muted-foreground text-sm">
              Connecting…
            </p>
          </div>
        )
      }
    >
      <ConnectedChat {...props} />
    </Suspense>
  );
}
