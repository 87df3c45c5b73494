import { describe, expect, it } from "vitest";
import { attributeCriteria, attributesSchema, PARENT_ATTRIBUTE } from "../../src/api/attributes";
import { checkedAttribute, checkedAttributes } from "../../src/engine/attributes";

// `parent_run` says which run started a child run (durable-objects/run/children.ts). A start that could set it
// would list itself among another run's children in `GET /runs?attr.parent_run=<id>`.
describe("the parent_run attribute is edgework's", () => {
  it("is refused from a start (POST /runs, ctx.spawn's attributes) and from ctx.setAttribute, naming why", () => {
    const start = attributesSchema(10, "attributes").safeParse({ repo: "acme/api", [PARENT_ATTRIBUTE]: "run-1" });
    expect(start.success).toBe(false);
    expect(start.error!.issues[0]).toMatchObject({ path: [PARENT_ATTRIBUTE], message: expect.stringContaining("set by edgework on a child run") });
    expect(checkedAttributes({ [PARENT_ATTRIBUTE]: "run-1" })).toEqual({ problems: [expect.stringContaining("set by edgework on a child run")] });
    expect(() => checkedAttribute(PARENT_ATTRIBUTE, "run-1", "ctx.setAttribute")).toThrow(/ctx\.setAttribute: parent_run is set by edgework/);
  });

  it("is a criterion a listing may filter on", () => {
    expect(attributeCriteria.parse({ [PARENT_ATTRIBUTE]: "run-1" })).toEqual({ [PARENT_ATTRIBUTE]: "run-1" });
  });
});
