import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { renderInApp } from "../../test/render.tsx";
import { FAST } from "./fixtures.ts";
import { NewProfileDialog } from "./profile-list.tsx";

afterEach(cleanup);

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
});
