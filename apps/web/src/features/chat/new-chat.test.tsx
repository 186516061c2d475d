import type { OrgSummary, Session } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api } from "../../lib/api.ts";
import { orgsApi } from "../../lib/orgs-api.ts";
import { renderInApp } from "../../test/render.tsx";
import { NewChatButton } from "./new-chat.tsx";

vi.mock("../../lib/session.tsx", () => ({
  useSession: () => ({
    me: { id: "u1", email: "ada@example.com", name: "Ada", createdAt: "x", orgs: [] },
    org: { id: "org_1", name: "Acme", role: "member", createdAt: "x" } as OrgSummary,
  }),
}));

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const at = "2026-12-01T10:00:00.000Z";
const session = (id: string, overrides: Partial<Session> = {}): Session => ({
  id,
  projectId: "prj_1",
  orgId: "org_1",
  ownerId: "u1",
  ownerLabel: "Ada",
  title: null,
  createdAt: at,
  updatedAt: at,
  lastActivityAt: at,
  spendMicros: 0,
  model: null,
  ...overrides,
});

describe("New chat", () => {
  it("goes to the person's chat that is still empty instead of making another", async () => {
    const list = vi.spyOn(orgsApi, "orgSessions").mockResolvedValue({
      items: [
        session("ses_used", { title: "Plans", lastActivityAt: "2026-12-01T11:00:00.000Z" }),
        session("ses_empty"),
      ],
      nextCursor: null,
    });
    const create = vi.spyOn(api, "createSession");
    const { router } = await renderInApp(<NewChatButton projectId="prj_1" />, {
      path: "/projects/prj_1",
    });
    fireEvent.click(screen.getByRole("button", { name: "New chat" }));
    await waitFor(() => expect(router.state.location.pathname).toBe("/sessions/ses_empty"));
    expect(list).toHaveBeenCalledWith("org_1", { project: "prj_1", member: "u1" });
    expect(create).not.toHaveBeenCalled();
  });

  it("makes a new chat when every one of the person's chats has been used", async () => {
    vi.spyOn(orgsApi, "orgSessions").mockResolvedValue({
      items: [session("ses_used", { title: "Plans", spendMicros: 1_200 })],
      nextCursor: null,
    });
    const create = vi.spyOn(api, "createSession").mockResolvedValue(session("ses_new"));
    const { router } = await renderInApp(<NewChatButton projectId="prj_1" />, {
      path: "/projects/prj_1",
    });
    fireEvent.click(screen.getByRole("button", { name: "New chat" }));
    await waitFor(() => expect(router.state.location.pathname).toBe("/sessions/ses_new"));
    expect(create).toHaveBeenCalledWith("prj_1");
  });
});
