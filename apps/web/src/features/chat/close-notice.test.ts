import { describe, expect, it } from "vitest";
import { closeNotice } from "./chat-panel.tsx";

describe("closeNotice", () => {
  it("tells the person why a chat closed for good, and stays quiet for closes that reconnect", () => {
    expect(closeNotice(4403)).toEqual({
      code: "forbidden",
      message: "You no longer have access to this chat.",
    });
    expect(closeNotice(4410)).toMatchObject({ code: "gone" });
    // 1013: the token expired; the SDK reconnects with a fresh ticket. 1000/1006: ordinary closes.
    for (const code of [1000, 1006, 1013]) expect(closeNotice(code)).toBeNull();
  });
});
