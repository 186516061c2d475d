import { erasureRequestSchema, type Member, type Project, type Session } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { toast } from "sonner";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { membersApi } from "../../features/members/members-api.ts";
import { ApiError, type ErasureRequest } from "../../lib/api.ts";
import { dataRightsApi } from "../../lib/data-rights-api.ts";
import { orgsApi } from "../../lib/orgs-api.ts";
import { keys } from "../../lib/query.ts";
import { answerEvery, describedText, refusedBody } from "../../test/refusal.ts";
import { renderInApp } from "../../test/render.tsx";
import { ErasureForm } from "./erasure-form.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const member = (userId: string, name: string, role: Member["role"]): Member => ({
  userId,
  email: `${name.split(" ")[0]?.toLowerCase()}@example.com`,
  name,
  role,
  joinedAt: "2026-11-29T00:00:00.000Z",
});

const project = (id: string, name: string): Project => ({
  id,
  orgId: "org_1",
  defaultProfileId: null,
  previewProfileId: null,
  name,
  memory: {},
  createdBy: "u1",
  createdAt: "2026-11-29T00:00:00.000Z",
  updatedAt: "2026-11-29T00:00:00.000Z",
});

const session = (id: string, title: string | null, ownerLabel: string, projectId: string) =>
  ({
    id,
    projectId,
    orgId: "org_1",
    ownerId: "u2",
    ownerLabel,
    title,
    createdAt: "2026-11-30T12:00:00.000Z",
    updatedAt: "2026-11-30T12:00:00.000Z",
    spendMicros: 0,
  }) as Session;

beforeEach(() => {
  vi.spyOn(membersApi, "members").mockResolvedValue({
    items: [
      member("u1", "Olive Owner", "owner"),
      member("u2", "Ada Lovelace", "member"),
      member("u3", "Bob Babbage", "admin"),
    ],
    nextCursor: null,
  });
  vi.spyOn(membersApi, "formerMembers").mockResolvedValue({ items: [], nextCursor: null });
  vi.spyOn(orgsApi, "projects").mockResolvedValue({
    items: [project("prj_1", "Support bot"), project("prj_2", "Sales")],
    nextCursor: null,
  });
  vi.spyOn(orgsApi, "orgSessions").mockResolvedValue({
    items: [
      session("ses_1", "Refund policy", "Ada Lovelace", "prj_1"),
      session("ses_2", null, "Bob Babbage", "prj_2"),
    ],
    nextCursor: null,
  });
});

const filed = { id: "er_1", status: "pending" } as ErasureRequest;
const form = () => screen.getByRole("form", { name: "File an erasure request" });
const target = () => within(form()).getByLabelText("What to erase") as HTMLSelectElement;
const optionTexts = () => [...target().options].slice(1).map((option) => option.textContent);
const submit = () =>
  fireEvent.click(within(form()).getByRole("button", { name: "File erasure request" }));

async function confirmTyping(text: string | null, label: string) {
  const dialog = await screen.findByRole("alertdialog");
  const button = within(dialog).getByRole("button", { name: label }) as HTMLButtonElement;
  if (text !== null) {
    expect(button.disabled).toBe(true);
    fireEvent.change(within(dialog).getByLabelText(/to confirm/), { target: { value: text } });
  }
  expect(button.disabled).toBe(false);
  fireEvent.click(button);
  return dialog;
}

describe("ErasureForm", () => {
  it("picks a member from the org's list by name and asks for the name typed before filing", async () => {
    const file = vi.spyOn(dataRightsApi, "fileErasure").mockResolvedValue(filed);
    const success = vi.spyOn(toast, "success");
    const { queryClient } = await renderInApp(
      <ErasureForm orgId="org_1" orgName="Acme" actorRole="owner" />,
    );
    await waitFor(() => expect(target().disabled).toBe(false));
    // No raw id to type: the target is one of the listed members.
    expect(within(form()).queryByLabelText("Id")).toBeNull();
    expect(optionTexts()).toEqual([
      "Olive Owner — olive@example.com",
      "Ada Lovelace — ada@example.com",
      "Bob Babbage — bob@example.com",
    ]);
    fireEvent.change(target(), { target: { value: "u2" } });
    fireEvent.change(within(form()).getByLabelText("Reason (optional)"), {
      target: { value: " asked by email " },
    });
    submit();
    const dialog = await screen.findByRole("alertdialog");
    expect(dialog.textContent).toMatch(/This erases Ada Lovelace from every store of Acme/);
    expect(dialog.textContent).toMatch(/cannot be undone/);
    expect(file).not.toHaveBeenCalled();
    await confirmTyping("Ada Lovelace", "Erase member");
    await waitFor(() =>
      expect(file).toHaveBeenCalledWith("org_1", {
        subject: { type: "member", id: "u2" },
        reason: "asked by email",
      }),
    );
    await waitFor(() => expect(success).toHaveBeenCalled());
    // The list shows the name of what this tab filed (the server keeps only a hash).
    expect(queryClient.getQueryData(keys.erasureLabels("org_1"))).toEqual({
      er_1: "Ada Lovelace",
    });
  });

  it("finds a former member by name, marked as such, and erases them", async () => {
    vi.spyOn(membersApi, "formerMembers").mockResolvedValue({
      items: [
        {
          userId: "u9",
          email: "grace@example.com",
          name: "Grace Gone",
          leftAt: "2026-12-05T00:00:00.000Z",
        },
      ],
      nextCursor: null,
    });
    const file = vi.spyOn(dataRightsApi, "fileErasure").mockResolvedValue(filed);
    await renderInApp(<ErasureForm orgId="org_1" orgName="Acme" actorRole="admin" />);
    await waitFor(() => expect(target().disabled).toBe(false));
    fireEvent.change(within(form()).getByLabelText("Search members"), {
      target: { value: "grace" },
    });
    expect(optionTexts()).toEqual(["Grace Gone — grace@example.com (former member)"]);
    const group = target().querySelector("optgroup");
    expect(group?.getAttribute("label")).toBe("Former members");
    fireEvent.change(target(), { target: { value: "u9" } });
    submit();
    const dialog = await screen.findByRole("alertdialog");
    expect(dialog.textContent).toMatch(/This erases Grace Gone, a former member, from every store/);
    await confirmTyping("Grace Gone", "Erase member");
    await waitFor(() =>
      expect(file).toHaveBeenCalledWith("org_1", { subject: { type: "member", id: "u9" } }),
    );
  });

  it("files nothing until a target is chosen, and nothing when the confirmation is cancelled", async () => {
    const file = vi.spyOn(dataRightsApi, "fileErasure");
    await renderInApp(<ErasureForm orgId="org_1" orgName="Acme" actorRole="owner" />);
    await waitFor(() => expect(target().disabled).toBe(false));
    submit();
    await waitFor(() => expect(describedText(target())).toMatch(/^Choose the member to erase\. /));
    expect(target().getAttribute("aria-invalid")).toBe("true");
    fireEvent.change(target(), { target: { value: "u3" } });
    submit();
    fireEvent.click(
      within(await screen.findByRole("alertdialog")).getByRole("button", { name: "Cancel" }),
    );
    await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());
    expect(file).not.toHaveBeenCalled();
  });

  it("offers an admin no owner to erase, and filters the list by a search", async () => {
    await renderInApp(<ErasureForm orgId="org_1" orgName="Acme" actorRole="admin" />);
    await waitFor(() => expect(target().disabled).toBe(false));
    expect(optionTexts()).toEqual([
      "Ada Lovelace — ada@example.com",
      "Bob Babbage — bob@example.com",
    ]);
    fireEvent.change(within(form()).getByLabelText("Search members"), {
      target: { value: "BOB@" },
    });
    expect(optionTexts()).toEqual(["Bob Babbage — bob@example.com"]);
  });

  it("erases a project after its name is typed", async () => {
    const file = vi.spyOn(dataRightsApi, "fileErasure").mockResolvedValue(filed);
    await renderInApp(<ErasureForm orgId="org_1" orgName="Acme" actorRole="owner" />);
    fireEvent.click(within(form()).getByRole("radio", { name: "Project" }));
    await waitFor(() => expect(optionTexts()).toEqual(["Support bot", "Sales"]));
    fireEvent.change(target(), { target: { value: "prj_2" } });
    submit();
    await confirmTyping("Sales", "Erase project");
    await waitFor(() =>
      expect(file).toHaveBeenCalledWith("org_1", { subject: { type: "project", id: "prj_2" } }),
    );
  });

  it("lists sessions by title with their member and project", async () => {
    const file = vi.spyOn(dataRightsApi, "fileErasure").mockResolvedValue(filed);
    await renderInApp(<ErasureForm orgId="org_1" orgName="Acme" actorRole="admin" />);
    fireEvent.click(within(form()).getByRole("radio", { name: "Session" }));
    await waitFor(() =>
      expect(optionTexts()).toEqual([
        "Refund policy — Ada Lovelace · Support bot",
        "Untitled session of Nov 30, 2026 — Bob Babbage · Sales",
      ]),
    );
    fireEvent.change(target(), { target: { value: "ses_1" } });
    submit();
    const dialog = await confirmTyping(null, "Erase session");
    expect(dialog.textContent).toMatch(/Refund policy — Ada Lovelace · Support bot/);
    await waitFor(() =>
      expect(file).toHaveBeenCalledWith("org_1", { subject: { type: "session", id: "ses_1" } }),
    );
  });

  it("shows the server's refusal", async () => {
    vi.spyOn(dataRightsApi, "fileErasure").mockRejectedValue(
      new ApiError("conflict", "The last owner cannot be erased: add another owner first", 409),
    );
    await renderInApp(<ErasureForm orgId="org_1" orgName="Acme" actorRole="owner" />);
    await waitFor(() => expect(target().disabled).toBe(false));
    fireEvent.change(target(), { target: { value: "u1" } });
    submit();
    await confirmTyping("Olive Owner", "Erase member");
    expect((await screen.findByRole("alert")).textContent).toMatch(/last owner/);
  });

  it("shows every problem of the API's refusal at its field", async () => {
    // Two fields refused at once: the reason, and the subject the picker chose.
    const refused = refusedBody(erasureRequestSchema, {
      subject: { type: "member", id: "" },
      reason: "Asked by \u202Eemail",
    });
    answerEvery(400, refused);
    await renderInApp(<ErasureForm orgId="org_1" orgName="Acme" actorRole="owner" />);
    await waitFor(() => expect(target().disabled).toBe(false));
    fireEvent.change(target(), { target: { value: "u3" } });
    const reason = within(form()).getByLabelText("Reason (optional)");
    fireEvent.change(reason, { target: { value: "Asked by \u202Eemail" } });
    submit();
    await confirmTyping("Bob Babbage", "Erase member");
    await waitFor(() => expect(target().getAttribute("aria-invalid")).toBe("true"));
    expect(describedText(target())).toMatch(/^Is required\. /);
    expect(reason.getAttribute("aria-invalid")).toBe("true");
    expect(describedText(reason)).toMatch(/^Must not contain bidirectional control characters/);
    expect(within(form()).queryByRole("alert")).toBeNull();
  });
});
