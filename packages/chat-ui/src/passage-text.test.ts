import { describe, expect, it } from "vitest";
import { findQuote, passageText } from "./passage-text.ts";

describe("passageText", () => {
  it("drops Markdown's marks and keeps the words", () => {
    expect(
      passageText(
        "# Title #\n> a **bold** and *soft* and __strong__ ~~gone~~ [link](https://x.y) ![alt](i.png)\n---\nsnake_case_name stays, 2 * 3 * 4 too",
      ),
    ).toBe(
      "Title\na bold and soft and strong gone link alt\n\nsnake_case_name stays, 2 * 3 * 4 too",
    );
  });

  it("drops page chrome with its content, other tags with theirs kept, and comments", () => {
    expect(
      passageText(
        'Intro<br>line <span class="x">two</span> &amp; a < b\n<!-- hidden -->\n<nav><a href="/">Home</a></nav><footer>\n<p>© Acme · <a href="/terms">Terms</a></p>\n</footer>\n<script>alert(1)</script>End',
      ),
    ).toBe("Intro\nline two & a < b\n\nEnd");
  });

  it("keeps code as written: fenced blocks and inline spans", () => {
    expect(
      passageText("Use `<div>**x**</div>` here.\n\n```\n<footer>**kept**</footer>\n```\nAfter"),
    ).toBe("Use <div>**x**</div> here.\n\n<footer>**kept**</footer>\nAfter");
  });
});

describe("findQuote", () => {
  it("finds the quote across line breaks and Markdown marks, or says it is not there", () => {
    const text = passageText("Items may be **returned**\nwithin 45 days.");
    const at = findQuote(text, "Items may be **returned** within 45 days.");
    expect(at && text.slice(at.start, at.end)).toBe("Items may be returned\nwithin 45 days.");
    expect(findQuote(text, "…within 45…")).toEqual({ start: 22, end: 31 });
    expect(findQuote(text, "not in it")).toBeNull();
    expect(findQuote(text, "…")).toBeNull();
  });
});
