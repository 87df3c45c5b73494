import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Sql } from "../../durable-objects/sql";
import { SqliteStateBackend } from "../../durable-objects/sqlite-state";
import { StorageError } from "../../src/engine";
import { saveResponse } from "../../src/engine/attachments/save-response";
import { utf8Bytes } from "../../src/engine/journal/bounds";
import type { GuardedResponse } from "../../src/engine/net/guarded-fetch";
import { readBytes } from "../../src/engine/toolsets/kinds/files-disk";

/** Runs `fn` with the `files` disk of a RunDO's SQLite (run scope), and the state rows' sizes as stored. */
const inRunDO = <T>(id: string, fn: (disk: ReturnType<SqliteStateBackend["open"]>, rows: () => Array<{ key: string; bytes: number }>) => Promise<T>) =>
  runInDurableObject(env.RUNS.getByName(id), (_instance, state) => {
    const sql = new Sql(state.storage.sql);
    const rows = () =>
      sql.all<{ key: string; bytes: number }>`SELECT key, length(CAST(key AS BLOB)) + length(CAST(value AS BLOB)) AS bytes FROM state WHERE scope_id = ${id}`;
    return fn(new SqliteStateBackend(sql).open("run", id, "~files"), rows);
  });

describe("files in a RunDO's SQLite", () => {
  it("a 3 MB text download saved with save_to is stored and reads back", async () => {
    // Quotes and control characters escape in JSON: as one row this would be over 4 MB.
    const text = 'line "quoted" \u0001 日本 é\n'.repeat(120_000);
    expect(utf8Bytes(text)).toBeGreaterThan(3_000_000);
    const to = { instance: "docs", ref: "docs:/docs/log.txt", path: "/docs/log.txt", maxFileBytes: 10_000_000, readonly: false };
    await inRunDO("files-sqlite-3mb", async (disk, rows) => {
      // Made inside the object: a body belongs to the context that created it.
      const res = Object.assign(new Response(text, { headers: { "content-type": "text/plain; charset=utf-8" } }), {
        finalUrl: "https://x.example/log.txt",
      }) as GuardedResponse;
      const out = await saveResponse(res, { ...to, disk }, 5_000_000);
      expect(out.saved).toMatchObject({ type: "text/plain", size: utf8Bytes(text) });
      expect(new TextDecoder().decode((await readBytes(disk, "/docs/log.txt"))!.bytes)).toBe(text);
      for (const r of rows()) expect(r.bytes, r.key).toBeLessThan(1_000_000);
    });
  });

  it("a write SQLite refuses is the engine's StorageError, permanent when a retry would meet the same limit", async () => {
    await inRunDO("files-sqlite-toobig", async (disk) => {
      const error = await disk.put("x", "y".repeat(3_000_000)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StorageError);
      expect(error).toMatchObject({
        permanent: true,
        message: expect.stringMatching(/^toolset state could not write x \(3000002 characters\): .*SQLITE_TOOBIG/),
      });
    });
  });
});
