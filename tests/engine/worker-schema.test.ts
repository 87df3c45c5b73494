import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { z } from "zod";
import committed from "../../schemas/worker.schema.json";
import { files as workerFiles } from "../../src/edgework.generated";
import { appKinds } from "../../src/engine/toolsets/app-kinds";
import { toolsets } from "../../src/toolsets/index";
import { workerFileJsonSchema } from "../../src/engine/catalog/worker-schema";

const kinds = appKinds(toolsets);

describe("schemas/worker.schema.json", () => {
  it("is what the zod schema generates now (else run `npm run schema`)", () => {
    expect(committed).toEqual(workerFileJsonSchema(kinds));
  });

  it("accepts the frontmatter of every bundled worker and refuses a bad one", () => {
    const check = z.fromJSONSchema(committed as unknown as Parameters<typeof z.fromJSONSchema>[0]);
    const files = Object.entries(workerFiles).filter(([f]) => f.endsWith(".worker"));
    expect(files.length).toBeGreaterThan(5);
    for (const [file, text] of files) {
      const frontmatter = parse(/^---\n([\s\S]*?)\n---/.exec(text)![1]!);
      expect(check.safeParse(frontmatter).success, file).toBe(true);
    }
    expect(check.safeParse({ name: "x", toolsets: { web: { use: "http", allow: ["a"], colour: "red" } } }).success).toBe(false);
    expect(check.safeParse({ name: "x", toolsets: { web: { use: "ftp" } } }).success).toBe(false);
  });
});
