import { describe, expect, it } from "vitest";
import { executeRun, MemoryJournalStore, scriptedModel } from "../../src/engine";
import { interpolate } from "../../src/engine/toolsets/interpolate";
import { harness, workerFile } from "./helpers";

describe("${VAR} in toolset config", () => {
  it("fills vars and defaults, deep in objects and lists", () => {
    const where = { file: "w.worker", field: "toolsets.web" };
    expect(interpolate({ allow: ["${HOST:-api.github.com}"], headers: { Authorization: "Bearer ${TOKEN}" }, n: 3 }, { TOKEN: "t0k" }, where)).toEqual({
      config: {
        allow: ["api.github.com"],
        headers: { Authorization: "Bearer t0k" },
        n: 3,
      },
      // What came from the vars, to redact; a default written in the file is not a secret.
      substituted: [{ name: "TOKEN", value: "t0k" }],
    });
    expect(() => interpolate({ headers: { Authorization: "Bearer ${TOKEN}" } }, {}, where)).toThrow(
      "w.worker: toolsets.web.headers.Authorization: uses ${TOKEN}, which is not set (wrangler secret put TOKEN, or .dev.vars locally)",
    );
  });

  it("a worker whose toolset needs a missing var fails with a config error; the resolved secret never reaches the journal", async () => {
    const file = workerFile(
      `name: gh\nmodel: test:m\ntoolsets:\n  web: { use: http, allow: ["\${HOST:-example.com}"], headers: { Authorization: "Bearer \${TOKEN}" } }`,
    );
    const model = () => scriptedModel([{ text: "ok" }]);
    const missing = harness({ "gh.worker": file }, { models: { "test:m": model() } });
    expect(await missing.run({ worker: "gh", input: { input: "x" } })).toMatchObject({
      status: "failed",
      error: { code: "config", message: expect.stringContaining("uses ${TOKEN}, which is not set") },
    });

    const h = harness({ "gh.worker": file }, { models: { "test:m": model() } });
    const store = new MemoryJournalStore();
    const out = await executeRun({ ...h.config, vars: { TOKEN: "secret-token-value" } }, store, { runId: "v", worker: "gh", input: { input: "x" } });
    expect(out.status).toBe("succeeded");
    expect(JSON.stringify([...store.entries])).not.toContain("secret-token-value");
  });
});
