import { cleanup, render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { ChatView } from "./chat-view.tsx";
import { readReplyModel } from "./reply-model.tsx";
import { fakeChat, reply } from "./test-chat.ts";

afterEach(cleanup);

describe("readReplyModel", () => {
  it("reads the model as an object with its display name, and the profile version", () => {
    expect(
      readReplyModel({
        model: { id: "parley/dev-fast", displayName: "Parley Dev Fast" },
        profile: { id: "apf_1", version: 3, name: "Support" },
      }),
    ).toEqual({
      model: { id: "parley/dev-fast", name: "Parley Dev Fast" },
      profile: { id: "apf_1", version: 3, name: "Support" },
    });
  });

  it("reads a model id with its label beside it, and falls back to the id", () => {
    expect(readReplyModel({ model: "parley/dev", modelLabel: "Parley Dev Model" }).model).toEqual({
      id: "parley/dev",
      name: "Parley Dev Model",
    });
    expect(readReplyModel({ model: { id: "parley/dev" } }).model).toEqual({
      id: "parley/dev",
      name: "parley/dev",
    });
  });

  it("tolerates absence and drops what is malformed", () => {
    expect(readReplyModel({ priceMicros: 10 })).toEqual({});
    expect(readReplyModel(undefined)).toEqual({});
    expect(
      readReplyModel({ model: 42, profile: { id: "apf_1", version: "3" }, modelLabel: 7 }),
    ).toEqual({});
    expect(readReplyModel({ profile: { id: null, version: 0 } }).profile).toEqual({
      id: null,
      version: 0,
    });
  });
});

describe("the reply footer", () => {
  const item = () =>
    within(screen.getByRole("list", { name: "Chat messages" })).getByRole("listitem");

  it("names the model by its display name and the profile version beside the cost", () => {
    const message = reply("a1", "Hello", {
      priceMicros: 4200,
      model: { id: "parley/dev-fast", displayName: "Parley Dev Fast" },
      profile: { id: "apf_1", version: 3 },
    });
    render(<ChatView chat={fakeChat({ messages: [message] })} label="Chat" />);
    const text = item().textContent ?? "";
    expect(text).toContain("Parley Dev Fast");
    expect(text).toContain("Profile v3");
    expect(text).toContain("$0.0042");
    expect(screen.getByTitle("parley/dev-fast").textContent).toBe("Model: Parley Dev Fast");
  });

  it("says the built-in assistant for version 0, and nothing when the metadata names neither", () => {
    const { unmount } = render(
      <ChatView
        chat={fakeChat({
          messages: [reply("a1", "Hi", { model: "parley/dev", profile: { id: null, version: 0 } })],
        })}
        label="Chat"
      />,
    );
    expect(item().textContent).toContain("Model: parley/dev");
    expect(item().textContent).toContain("Assistant profile: Built-in assistant");
    unmount();
    render(
      <ChatView
        chat={fakeChat({ messages: [reply("a2", "Hi", { priceMicros: 5 })] })}
        label="Chat"
      />,
    );
    expect(item().textContent).not.toContain("Model:");
    expect(item().textContent).not.toContain("Profile");
  });

  it("is not shown where cost is not (an app's end user never picks a model)", () => {
    const message = reply("a1", "Hello", {
      model: { id: "parley/dev-fast", displayName: "Parley Dev Fast" },
      profile: { id: "apf_1", version: 3 },
    });
    render(<ChatView chat={fakeChat({ messages: [message] })} label="Chat" showCost={false} />);
    expect(item().textContent).not.toContain("Parley Dev Fast");
  });
});
