import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseYaml } from "../../src/build/yaml";
import { loadApp } from "../../src/catalog";
import { stub } from "../durable-objects/helpers";

const deliver = (body: unknown) =>
  exports.default.fetch(
    new Request("https://edgework.test/hooks/attr-form", {
      method: "POST",
      headers: { "content-type": "application/json", "X-Webhook-Token": "form-secret" },
      body: JSON.stringify(body),
    }),
  );

describe("a webhook trigger's attributes", () => {
  it("come from the payload by JSON pointer; a value that is absent, an object or hostile text is left out and the run starts", async () => {
    const res = await deliver({ kind: "a", repository: { full_name: "acme/api" }, issue: { number: 7, title: "ok\u0000", labels: ["bug"] } });
    expect(res.status).toBe(202);
    const { run_id } = (await res.json()) as { run_id: string };
    expect((await stub(run_id).status())!.attributes).toEqual({ repo: "acme/api", number: "7" });

    const hostile = await deliver({
      kind: "b",
      repository: { full_name: "r".repeat(300) },
      issue: { number: Number.POSITIVE_INFINITY, title: "'; DROP TABLE runs; --" },
    });
    expect(hostile.status).toBe(202);
    const second = ((await hostile.json()) as { run_id: string }).run_id;
    expect((await stub(second).status())!.attributes).toEqual({ title: "'; DROP TABLE runs; --" });
  });

  it("triggers.yaml refuses a bad attribute name, a value that is no pointer, and more than 10", () => {
    const files = {
      "workers/plain.worker": "---\nname: plain\n---\nDefault input.",
      "workers/triggers.yaml": "",
    };
    const problems = (yaml: string) => {
      try {
        loadApp({ ...files, "workers/triggers.yaml": yaml }, parseYaml);
        return "";
      } catch (err) {
        return (err as Error).message;
      }
    };
    const hook = (attributes: string) => `h:\n  worker: plain\n  verify: { scheme: token, secret_env: S }\n  input: {}\n  attributes: ${attributes}\n`;
    expect(problems(hook("{ Repo: /a }"))).toMatch(/h\.attributes\.Repo.*is not an attribute name/);
    expect(problems(hook("{ repo: a/b }"))).toMatch(/h\.attributes\.repo.*JSON pointer/);
    expect(problems(hook(`{ ${Array.from({ length: 11 }, (_, i) => `a${i}: /x`).join(", ")} }`))).toMatch(/h\.attributes.*at most 10 attributes/);
    expect(problems(hook("{ repo: /repository/full_name }"))).toBe("");
    const schedule = (attributes: string) => `s:\n  worker: plain\n  schedule: "0 6 * * *"\n  input: { input: go }\n  attributes: ${attributes}\n`;
    expect(problems(schedule('{ team: "a\\u0007" }'))).toMatch(/s\.attributes\.team.*control characters/);
    expect(problems(schedule("{ team: ops }"))).toBe("");
  });
});
