import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Sql } from "../../durable-objects/sql";
import { SqliteStateBackend } from "../../durable-objects/sqlite-state";

/**
 * `list(prefix)` once scanned `key >= prefix AND key < prefix + "\uffff"`. SQLite
 * compares UTF-8 bytes, and a character past U+FFFF (an emoji: F0 …) sorts after
 * U+FFFF (EF BF BF): a file a model names "😀.txt" is written and readable but never
 * listed by list_files (the in-memory backend, with startsWith, does list it).
 */
describe("state list by prefix in SQLite", () => {
  it("lists a key whose next character is outside the BMP", async () => {
    await runInDurableObject(env.RUNS.getByName("review-state-range"), async (_o, state) => {
      const sql = new Sql(state.storage.sql);
      const kv = new SqliteStateBackend(sql).open("run", "r1", "~files");
      await kv.put("file:/w/a.txt", "a");
      await kv.put("file:/w/\u{1F600}.txt", "hidden");
      expect(await kv.get("file:/w/\u{1F600}.txt")).toBe("hidden");
      expect((await kv.list("file:/w/")).map(([k]) => k)).toEqual(["file:/w/a.txt", "file:/w/\u{1F600}.txt"]);
    });
  });
});
