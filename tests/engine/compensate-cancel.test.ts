// A run cancelled with effects to undo (RunRequest.cancelled): no body, its undos, then its state cleared like any end.
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { executeRun, MemoryJournalStore, type MemoryStateBackend, scriptedModel } from "../../src/engine";
import { harness, workerFile } from "./helpers";

it("a run cancelled after undoing its effects ends with its run- and call-scoped state deleted, as any end", async () => {
  const store = new MemoryJournalStore();
  const h = harness(
    {
      "w.worker": workerFile(
        `name: w\nmodel: test:m\ntoolsets:\n  api: { use: http, allow: ["${new URL(env.FAKE_UPSTREAM_A).host}"], compensate: { fetch: { tool: fetch, args: { url: "\${args.url}", method: DELETE } } } }\napproval:\n  api_fetch: allow`,
      ),
    },
    {
      models: {
        "test:m": scriptedModel((_, n) => {
          if (n > 0) return { text: "done" };
          return {
            toolCalls: [{ id: "c1", name: "api_fetch", args: { url: `${env.FAKE_UPSTREAM_A}/${crypto.randomUUID()}/echo`, method: "POST", body: "{}" } }],
          };
        }),
      },
    },
  );
  const evicting = {
    ...h.config,
    beforeStep: async (key: string) => {
      if (key.includes("turn:2")) throw new Error("evicted");
    },
  };
  await expect(executeRun(evicting, store, { runId: "r1", worker: "w", input: { input: "x" } })).rejects.toThrow("evicted");
  expect([...store.entries.keys()].some((k) => k.endsWith("/undo"))).toBe(true);
  const states = h.config.states as MemoryStateBackend;
  await states.open("run", "r1", "ns").put("k", 1);
  await states.open("call", "r1:w", "ns").put("k", 1);
  const out = await executeRun(h.config, store, { runId: "r1", worker: "w", input: { input: "x" }, cancelled: {} });
  expect(out.status).toBe("cancelled");
  expect([...states.rows.keys()]).toEqual([]);
});
