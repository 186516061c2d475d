import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { ChatView } from "./chat-view.tsx";
import { fakeChat } from "./test-chat.ts";

afterEach(cleanup);

describe("ChatView's empty state", () => {
  it("given as a function, gets send: a suggested prompt starts the chat", () => {
    const chat = fakeChat();
    render(
      <ChatView
        chat={chat}
        label="Chat"
        emptyState={(send) => (
          <button type="button" onClick={() => send("What can you do?")}>
            What can you do?
          </button>
        )}
      />,
    );
    fireEvent.click(screen.getByRole("button", { name: "What can you do?" }));
    expect(chat.send).toHaveBeenCalledWith("What can you do?");
  });
});
