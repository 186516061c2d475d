import { cleanup, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { renderInApp } from "../../test/render.tsx";
import { StopAction, stopAction } from "./stop-action.tsx";

afterEach(cleanup);

describe("StopAction", () => {
  it("offers owners and admins a way to raise a spend limit, never a top-up", async () => {
    await renderInApp(<StopAction code="spend_limit" canManage />);
    const link = screen.getByRole("link", { name: "Raise the limit" });
    expect(link.getAttribute("href")).toBe("/billing#limits");
    expect(screen.queryByText(/top up/i)).toBeNull();
  });

  it("tells a member to ask an admin about a spend limit", async () => {
    await renderInApp(<StopAction code="spend_limit" canManage={false} />);
    expect(screen.getByText("Ask an admin to raise it")).toBeTruthy();
    expect(screen.queryByRole("link")).toBeNull();
  });

  it("offers Top up when the organization is out of credits", async () => {
    await renderInApp(<StopAction code="insufficient_credits" canManage />);
    expect(screen.getByRole("link", { name: "Top up" }).getAttribute("href")).toBe(
      "/billing#top-up",
    );
  });

  it("never words a limit stop as a top-up, for anyone", () => {
    for (const canManage of [true, false]) {
      expect(stopAction("spend_limit", canManage).label).not.toMatch(/top up/i);
    }
  });
});
