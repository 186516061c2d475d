import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SessionSidebar, type SessionSidebarProps } from "./session-sidebar.tsx";

afterEach(cleanup);

const sessions = [
  { id: "s1", title: "Pricing ideas", updatedAt: "2026-11-20T10:00:00Z", spendMicros: 4200 },
  { id: "s2", title: "Launch plan" },
  { id: "s3", title: "Pricing page copy" },
];

function setup(overrides: Partial<SessionSidebarProps> = {}) {
  const props: SessionSidebarProps = {
    sessions,
    currentId: "s2",
    renderLink: (session, children, linkProps) => (
      <a href={`/sessions/${session.id}`} {...linkProps}>
        {children}
      </a>
    ),
    onNew: vi.fn(),
    onRename: vi.fn(),
    onDelete: vi.fn(),
    ...overrides,
  };
  render(<SessionSidebar {...props} />);
  return props;
}

const titles = () =>
  screen.getAllByRole("link").map((link) => link.querySelector("span")?.textContent);

describe("SessionSidebar", () => {
  it("lists sessions through the app's links, marks the current one, and starts a new chat", () => {
    const props = setup();
    expect(titles()).toEqual(["Pricing ideas", "Launch plan", "Pricing page copy"]);
    expect(screen.getByRole("link", { name: /Launch plan/ }).getAttribute("aria-current")).toBe(
      "page",
    );
    expect(
      screen.getByRole("link", { name: /Pricing ideas/ }).getAttribute("aria-current"),
    ).toBeNull();
    expect(screen.getByRole("link", { name: /Pricing ideas/ }).textContent).toContain("$0.0042");
    fireEvent.click(screen.getByRole("button", { name: "New chat" }));
    expect(props.onNew).toHaveBeenCalledOnce();
  });

  it("filters by title locally, ignoring case", () => {
    setup();
    fireEvent.change(screen.getByRole("searchbox", { name: "Search chats" }), {
      target: { value: "PRICING" },
    });
    expect(titles()).toEqual(["Pricing ideas", "Pricing page copy"]);
    fireEvent.change(screen.getByRole("searchbox", { name: "Search chats" }), {
      target: { value: "zzz" },
    });
    expect(screen.queryAllByRole("link")).toHaveLength(0);
    expect(screen.getByText("No chat matches.")).toBeTruthy();
  });

  it("renames inline: Enter saves the trimmed title", () => {
    const props = setup();
    fireEvent.click(screen.getByRole("button", { name: "Rename Launch plan" }));
    const input = screen.getByRole("textbox", { name: "Rename Launch plan" });
    fireEvent.change(input, { target: { value: "  Launch v2 " } });
    fireEvent.keyDown(input, { key: "Enter" });
    expect(props.onRename).toHaveBeenCalledExactlyOnceWith("s2", "Launch v2");
    expect(screen.queryByRole("textbox", { name: /Rename/ })).toBeNull();
  });

  it("renames inline: Esc cancels and keeps the title", () => {
    const props = setup();
    fireEvent.click(screen.getByRole("button", { name: "Rename Launch plan" }));
    const input = screen.getByRole("textbox", { name: "Rename Launch plan" });
    fireEvent.change(input, { target: { value: "Something else" } });
    fireEvent.keyDown(input, { key: "Escape" });
    fireEvent.blur(input);
    expect(props.onRename).not.toHaveBeenCalled();
    expect(screen.getByRole("link", { name: /Launch plan/ })).toBeTruthy();
  });

  it("offers no Delete when the app gives no onDelete", () => {
    setup({ onDelete: undefined });
    expect(screen.queryByRole("button", { name: /^Delete / })).toBeNull();
    expect(screen.getAllByRole("button", { name: /^Rename / })).toHaveLength(3);
  });

  it("deletes only after the app's confirmation says yes", async () => {
    const confirmDelete = vi.fn().mockResolvedValueOnce(false).mockResolvedValueOnce(true);
    const props = setup({ confirmDelete });
    fireEvent.click(screen.getByRole("button", { name: "Delete Pricing ideas" }));
    await waitFor(() => expect(confirmDelete).toHaveBeenCalledTimes(1));
    expect(props.onDelete).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole("button", { name: "Delete Pricing ideas" }));
    await waitFor(() => expect(props.onDelete).toHaveBeenCalledExactlyOnceWith("s1"));
    expect(confirmDelete).toHaveBeenLastCalledWith(sessions[0]);
  });
});
