import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { overwriteSql } from "../../src/erasure/overwrite.ts";

/**
 * The erasure's overwrite-then-delete on a real SQLite file, with secure_delete off (as D1 and
 * Durable Objects leave it, and refuse to change): a plain DELETE leaves the erased text readable in
 * the file; overwriting it in place first does not.
 */
const dir = mkdtempSync(path.join(tmpdir(), "parley-overwrite-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fileAfter(name: string, erase: (db: DatabaseSync) => void, secret: string): Buffer {
  const file = path.join(dir, `${name}.sqlite`);
  const db = new DatabaseSync(file);
  db.exec("PRAGMA secure_delete = OFF");
  db.exec("CREATE TABLE users (id TEXT PRIMARY KEY, email TEXT NOT NULL, name TEXT NOT NULL)");
  // Neighbours on the same page, so the page stays in use after the delete.
  for (let i = 0; i < 20; i++) {
    db.prepare("INSERT INTO users VALUES (?, ?, ?)").all(`usr_${i}`, `n${i}@x.test`, `N ${i}`);
  }
  db.prepare("INSERT INTO users VALUES (?, ?, ?)").all("usr_gone", secret, "Ada Gone");
  erase(db);
  db.close();
  return readFileSync(file);
}

describe("overwriting before a delete", () => {
  const secret = "ada.lovelace.erased@example.test";

  it("a plain DELETE leaves the erased email in the database file (secure_delete off)", () => {
    const bytes = fileAfter(
      "plain",
      (db) => db.prepare("DELETE FROM users WHERE id = ?").all("usr_gone"),
      secret,
    );
    expect(bytes.includes(Buffer.from(secret))).toBe(true);
  });

  it("overwriting in place first leaves neither the email nor the name, and the rest intact", () => {
    const bytes = fileAfter(
      "overwritten",
      (db) => {
        db.prepare(overwriteSql("users", ["email", "name"], "id = ?")).all("usr_gone");
        db.prepare("DELETE FROM users WHERE id = ?").all("usr_gone");
      },
      secret,
    );
    expect(bytes.includes(Buffer.from(secret))).toBe(false);
    expect(bytes.includes(Buffer.from("Ada Gone"))).toBe(false);
    expect(bytes.includes(Buffer.from("n7@x.test"))).toBe(true);
  });

  it("keeps the value's size (so SQLite rewrites it in place) for multi-byte text too", () => {
    const db = new DatabaseSync(":memory:");
    db.exec("CREATE TABLE t (id TEXT, v TEXT)");
    db.prepare("INSERT INTO t VALUES ('a', ?)").all("Zoë ✓ 名前");
    db.prepare(overwriteSql("t", ["v"], "id = ?")).all("a");
    const [row] = db.prepare("SELECT v, length(CAST(v AS BLOB)) AS n FROM t").all();
    expect(row).toEqual({
      v: "0".repeat(Buffer.byteLength("Zoë ✓ 名前")),
      n: Buffer.byteLength("Zoë ✓ 名前"),
    });
    db.close();
  });
});
