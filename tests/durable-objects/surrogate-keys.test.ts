import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SqliteJournalStore } from "../../durable-objects/sqlite-journal";
import { Sql } from "../../durable-objects/sql";
import { Journal } from "../../src/engine/journal/journal";
import { KEY_GRAMMAR, stepKey } from "../../src/engine/journal/keys";

/**
 * Review of issue 19: a `ctx.step` name (which keys.ts says a kind may take from a
 * model) holding a lone surrogate. The key is encoded for "/" and "%" but written to
 * SQLite as is: SQLite keeps UTF-8, a lone surrogate comes back as U+FFFD, so after an
 * eviction the recorded step is not found under its key and the effect runs again.
 */
describe("review: journal keys with lone surrogates", () => {
  const call = "fn/turn:1/tool:1";

  it("a step whose name holds a lone surrogate is replayed after an eviction, not run again", async () => {
    await runInDurableObject(env.RUNS.getByName("review-surrogate-1"), async (_o, state) => {
      const sql = new Sql(state.storage.sql);
      const key = stepKey(KEY_GRAMMAR, call, "fetch:\uD800");
      let effects = 0;
      const effect = () => ++effects;
      await (await Journal.open(new SqliteJournalStore(sql))).step(key, effect);
      // The object is evicted: the next activation loads the journal from SQLite.
      await (await Journal.open(new SqliteJournalStore(sql))).step(key, effect);
      expect(effects).toBe(1);
    });
  });

  it("two steps whose names differ only in a lone surrogate keep their own results after an eviction", async () => {
    await runInDurableObject(env.RUNS.getByName("review-surrogate-2"), async (_o, state) => {
      const sql = new Sql(state.storage.sql);
      const a = stepKey(KEY_GRAMMAR, call, "\uD800");
      const b = stepKey(KEY_GRAMMAR, call, "\uDBFF");
      const first = await Journal.open(new SqliteJournalStore(sql));
      await first.step(a, () => "result of a");
      await first.step(b, () => "result of b");
      const replay = await Journal.open(new SqliteJournalStore(sql));
      expect(replay.get(a)).toBe("result of a");
      expect(replay.get(b)).toBe("result of b");
    });
  });

  it("names that differ only in a lone surrogate get different keys, short or long, and a pair is kept as written", () => {
    const long = "n".repeat(200);
    const keys = ["\uD800", "\uDBFF", "%uD800", "%uDBFF", `${long}\uD800`, `${long}\uDBFF`, `${long}%uD800`, long, "\uD83D\uDE00"].map((n) =>
      stepKey(KEY_GRAMMAR, call, n),
    );
    expect(new Set(keys).size).toBe(keys.length);
    for (const k of keys) expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(k), k).toBe(false);
    expect(keys.at(-1)).toBe(`${call}/step:\uD83D\uDE00`);
  });
});
