import { act, cleanup, render, waitFor } from "@testing-library/react";
import { Suspense, use } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Markdown } from "./markdown.tsx";

// The renderer's chunk arrives only when the test says so (a slow network, a cold cache).
const chunk = vi.hoisted(() => {
  let release = () => {};
  const arrived = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { arrived, release };
});
vi.mock("./markdown-renderer.tsx", async (importOriginal) => {
  await chunk.arrived;
  return importOriginal();
});

afterEach(cleanup);

// The chat suspends while its transcript loads (the SDK reads it with `use`).
let arrive = (_text: string) => {};
const transcript = new Promise<string>((resolve) => {
  arrive = resolve;
});
function Reply() {
  return <Markdown>{use(transcript)}</Markdown>;
}

describe("Markdown before its renderer has arrived", () => {
  it("shows a transcript that loads first at once, as plain text, then as markdown", async () => {
    let container = document.body;
    await act(async () => {
      container = render(
        <Suspense fallback={<p>Connecting…</p>}>
          <Reply />
        </Suspense>,
      ).container;
    });
    expect(container.textContent).toBe("Connecting…");
    await act(async () => arrive("Some **bold** words"));
    // Readable while the renderer is still on its way, not held behind the chat's fallback…
    await waitFor(() => expect(container.textContent).toBe("Some **bold** words"));
    // …and markdown once it has arrived.
    await act(async () => chunk.release());
    await waitFor(() =>
      expect(container.querySelector('[data-streamdown="strong"]')?.textContent).toBe("bold"),
    );
    expect(container.textContent).toBe("Some bold words");
  });
});
