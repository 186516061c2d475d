import { createProfileSchema } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { answerEvery, describedText, refusedBody } from "../../test/refusal.ts";
import { renderInApp } from "../../test/render.tsx";
import { FAST } from "./fixtures.ts";
import { NewProfileDialog } from "./profile-list.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("NewProfileDialog", () => {
  it("says the list is the org's allowed models and leads to where more are allowed", async () => {
    const { router } = await renderInApp(<NewProfileDialog orgId="org_1" models={[FAST]} />);
    fireEvent.click(screen.getByRole("button", { name: "New profile" }));
    const link = await screen.findByRole("link", { name: "Assistants → Models" });
    expect(link.getAttribute("href")).toBe("/assistants#models");
    expect(screen.getByText(/Only the models this organization allows are listed/).id).toBeTruthy();
    fireEvent.click(link);
    await waitFor(() => expect(router.state.location.hash).toBe("models"));
    expect(screen.queryByRole("dialog")).toBeNull();
  });

  it("shows both problems of the API's refusal, each at its field, the model by its name", async () => {
    const refused = refusedBody(createProfileSchema, { name: "\u202EHelper", model: "" });
    answerEvery(400, {
      error: {
        ...refused.error,
        issues: [
          refused.error.issues?.[0],
          {
            field: "model",
            message: `${FAST.id} is not allowed in this organization (owners and admins choose its models)`,
          },
        ],
      },
    });
    await renderInApp(<NewProfileDialog orgId="org_1" models={[FAST]} />);
    fireEvent.click(screen.getByRole("button", { name: "New profile" }));
    const dialog = await screen.findByRole("dialog");
    const name = within(dialog).getByLabelText("Name");
    fireEvent.change(name, { target: { value: "\u202EHelper" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Create profile" }));
    await waitFor(() => expect(name.getAttribute("aria-invalid")).toBe("true"));
    expect(describedText(name)).toMatch(/^Must not contain bidirectional control characters/);
    const model = within(dialog).getByRole("combobox", { name: "Model" });
    expect(model.getAttribute("aria-invalid")).toBe("true");
    expect(describedText(model)).toMatch(
      new RegExp(`^${FAST.displayName} is not allowed in this organization .*\\. Only the models`),
    );
    expect(within(dialog).queryByRole("alert")).toBeNull();
  });
});
