import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseYaml } from "../../src/build/yaml";
import { loadCatalog } from "../../src/engine";
import { appKinds } from "../../src/engine/toolsets/app-kinds";
import { toolsets } from "../../src/toolsets/index";
import { script, settle } from "../durable-objects/helpers";

const kinds = appKinds(toolsets);

const auth = { Authorization: "Bearer test-token" };
const call = (path: string, init: RequestInit = {}) => exports.default.fetch(new Request(`https://edgework.test${path}`, init));

describe("GET /runs/:id/workers/:name", () => {
  it("returns a created worker as .worker text the catalog loader accepts, with the creator's granted instance and policies only", async () => {
    const definition = {
      name: "reader",
      description: "Reads one source file",
      instructions: "Read the file you are given.\n---\nA line of dashes stays in the instructions.",
      toolsets: ["src"],
      input: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    };
    await script("maker", [{ tool_calls: [{ name: "make_worker_create", arguments: definition }] }, { text: "made it" }]);
    const res = await call("/runs", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ worker: "maker", input: "go" }),
    });
    const { id } = (await res.json()) as { id: string };
    expect((await settle(id)).status).toBe("succeeded");

    const got = await call(`/runs/${id}/workers/reader`, { headers: auth });
    expect(got.status).toBe(200);
    const text = await got.text();
    // YAML as worker files are written (not JSON), and the same frontmatter read back.
    const frontmatter = text.split("\n---\n")[0]!.slice("---\n".length);
    expect(frontmatter.split("\n").slice(0, 3)).toEqual(["name: reader", "description: Reads one source file", 'model: "openai:maker"']);
    expect(parseYaml(frontmatter)).toMatchObject({ name: "reader", input: definition.input, toolsets: { src: { use: "files", root: "/src" } } });
    // As a person would commit it under workers/: the build reads it as YAML.
    const catalog = loadCatalog({ "workers/reader.worker": text }, kinds, parseYaml);
    const reader = catalog.get("reader")!;
    expect(reader).toMatchObject({ description: "Reads one source file", instructions: definition.instructions, input: definition.input });
    expect(Object.keys(reader.toolsets)).toEqual(["src"]);
    expect(reader.toolsets.src).toMatchObject({ use: "files", config: { root: "/src" } });
    expect(reader.approval).toEqual({ src_write_file: "deny" });
    expect(reader.notify).toBe("approver@example.com");

    expect((await call(`/runs/${id}/workers/nobody`, { headers: auth })).status).toBe(404);
    expect((await call(`/runs/${id}/workers/reader`)).status).toBe(401);
  });
});
