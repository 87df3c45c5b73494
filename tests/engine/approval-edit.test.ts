import { describe, expect, it } from "vitest";
import { editProblem, MAX_EDIT_BYTES, responseProblem } from "../../src/engine/approvals/edit";
import { withEditNote } from "../../src/engine/approvals/edit-note";
import { argumentFields, argumentsFromForm, argumentsFromJson } from "../../src/views/argument-fields";

/** A schema as zod writes a tool's input (no additionalProperties): lenient, so edits are checked for unknown fields here. */
const lenient = {
  type: "object",
  properties: {
    title: { type: "string", maxLength: 100 },
    count: { type: "integer" },
    draft: { type: "boolean" },
    label: { enum: ["bug", "docs", 3] },
    meta: { type: "object", properties: { owner: { type: "string" } } },
    tags: { type: "array", items: { type: "object", properties: { name: { type: "string" } } } },
    extra: { type: "object", additionalProperties: { type: "string" } },
  },
  required: ["title"],
};

describe("editProblem: what an approver's arguments may be", () => {
  it("takes arguments the schema describes", () => {
    expect(editProblem(lenient, { title: "t", count: 2, draft: false, label: 3, meta: { owner: "o" }, tags: [{ name: "a" }], extra: { any: "x" } })).toBeNull();
  });

  it("refuses a field the schema does not name, at any depth it names fields, naming its path", () => {
    expect(editProblem(lenient, { title: "t", tittle: "typo" })).toBe("arguments.tittle: not a field of the tool's input schema");
    expect(editProblem(lenient, { title: "t", meta: { ownr: "o" } })).toBe("arguments.meta.ownr: not a field of the tool's input schema");
    expect(editProblem(lenient, { title: "t", tags: [{ name: "a" }, { nam: "b" }] })).toBe("arguments.tags.1.nam: not a field of the tool's input schema");
    expect(editProblem(lenient, { title: "t", __proto__: { polluted: true } })).toBeNull(); // a literal's __proto__ sets the prototype: no own field
    expect(editProblem(lenient, JSON.parse('{"title":"t","__proto__":{"polluted":true}}'))).toBe("arguments.__proto__: not a field of the tool's input schema");
  });

  it("leaves fields a schema allows (additionalProperties, patternProperties) to it", () => {
    expect(editProblem({ type: "object", properties: { a: { type: "string" } }, additionalProperties: true }, { a: "x", b: 1 })).toBeNull();
    expect(editProblem({ type: "object", properties: { a: {} }, patternProperties: { "^x-": {} } }, { a: 1, "x-b": 2 })).toBeNull();
    // false closes it as much as leaving it out.
    expect(editProblem({ type: "object", properties: { a: {} }, additionalProperties: false }, { a: 1, b: 2 })).toBe(
      "arguments.b: not a field of the tool's input schema",
    );
  });

  it("refuses wrong types and missing fields as the schema says, under `arguments`", () => {
    expect(editProblem(lenient, { title: 5 })).toMatch(/^arguments\.title: /);
    expect(editProblem(lenient, { count: 1 })).toBe("arguments.title: required");
    expect(editProblem(lenient, { title: "t", label: "feature" })).toMatch(/^arguments\.label: /);
    expect(editProblem(lenient, "a string")).toMatch(/^arguments: /);
  });

  it("bounds size and depth before anything else looks at the value", () => {
    expect(editProblem(lenient, { title: "x".repeat(MAX_EDIT_BYTES) })).toMatch(/^arguments: \d+ bytes as JSON; at most 65536$/);
    // Counted in UTF-8: 30,000 three-byte characters are 90,000 bytes.
    expect(editProblem(lenient, { title: "€".repeat(30_000) })).toMatch(/^arguments: 900\d\d bytes as JSON/);
    let deep: unknown = "x";
    for (let i = 0; i < 100; i++) deep = { meta: deep };
    expect(editProblem(lenient, deep)).toBe("arguments: nested deeper than 64 levels");
    expect(editProblem(lenient, undefined)).toBe("arguments: missing");
    const loop: Record<string, unknown> = { title: "t" };
    loop.self = loop;
    expect(editProblem(lenient, loop)).toBe("arguments: not JSON");
  });

  it("an input schema the validator cannot read refuses edits, saying so", () => {
    expect(editProblem({ type: "object", properties: { a: { pattern: "(" } } }, { a: "x" })).toMatch(/^arguments: the tool's input schema cannot be checked/);
  });

  it("never runs the schema's regexes (a hostile MCP server's pattern would backtrack in the run's object): the tool checks those itself (review 5)", () => {
    const patterned = { type: "object", properties: { q: { type: "string", pattern: "^x$" } } };
    expect(editProblem(patterned, { q: "y" })).toBeNull();
    expect(editProblem(patterned, { q: 5 })).toMatch(/^arguments\.q: /);
    // Exponential in the string's length with a backtracking engine: 2^40 steps.
    const evil = "^(a+)+$";
    const hostile = `${"a".repeat(40)}!`;
    expect(editProblem({ type: "object", properties: { q: { type: "string", pattern: evil } } }, { q: hostile })).toBeNull();
    // A name patternProperties matches is a field the schema allows; what additionalProperties says beside it is left to the tool as well.
    const named = { type: "object", properties: { a: {} }, patternProperties: { [evil]: { type: "string" } }, additionalProperties: false };
    expect(editProblem(named, { a: 1, [hostile]: "x" })).toBeNull();
    expect(editProblem(named, { a: 1, "a b": "x" })).toBeNull();
    // A property merely named "pattern" is a field like any other.
    expect(editProblem({ type: "object", properties: { pattern: { type: "string" } }, required: ["pattern"] }, {})).toBe("arguments.pattern: required");
  });

  it("responseProblem: text, not empty, bounded", () => {
    expect(responseProblem("use label question")).toBeNull();
    expect(responseProblem(" \n")).toBe("result: empty");
    expect(responseProblem("y".repeat(32_001))).toBe("result: 32001 characters; at most 32000");
  });
});

describe("the approval page's form of a schema", () => {
  const asked = { title: "Fix it", count: 2, draft: true, label: "bug", meta: { owner: "ann" } };

  it("one field per property, filled with the asked arguments; raw JSON only past the bound or without named properties", () => {
    const fields = argumentFields(lenient, asked)!;
    expect(fields.map((f) => [f.name, f.kind, f.value])).toEqual([
      ["title", "string", "Fix it"],
      ["count", "number", "2"],
      ["draft", "boolean", "true"],
      ["label", "enum", '"bug"'],
      ["meta", "json", '{\n  "owner": "ann"\n}'],
      ["tags", "json", ""],
      ["extra", "json", ""],
    ]);
    expect(fields[0]).toMatchObject({ required: true, multiline: false });
    expect(fields.find((f) => f.name === "label")).toMatchObject({
      options: [
        { value: '"bug"', label: "bug" },
        { value: '"docs"', label: "docs" },
        { value: "3", label: "3" },
      ],
    });
    expect(argumentFields({ type: "object" }, {})).toBeNull();
    expect(argumentFields({ type: "object", properties: Object.fromEntries(Array.from({ length: 41 }, (_, i) => [`p${i}`, {}])) }, {})).toBeNull();
  });

  it("reads the posted form back: unchanged fields give the asked arguments", () => {
    const fields = argumentFields(lenient, asked)!;
    const form = {
      "arg.title": "Fix it",
      "arg.count": "2",
      "arg.draft": "true",
      "arg.label": '"bug"',
      "arg.meta": '{"owner":"ann"}',
      "arg.tags": "",
      "arg.extra": "",
    };
    expect(argumentsFromForm(fields, form, asked)).toEqual({ args: asked });
  });

  it("arguments the form has no field for are sent as asked, never dropped unseen (review 5)", () => {
    const open = { type: "object", properties: { query: { type: "string" } }, additionalProperties: true };
    const withExtra = { query: "q", dry_run: true };
    const fields = argumentFields(open, withExtra)!;
    expect(fields.map((f) => f.name)).toEqual(["query"]);
    expect(argumentsFromForm(fields, { "arg.query": "q2" }, withExtra)).toEqual({ args: { query: "q2", dry_run: true } });
    // A field the form has, emptied, is left out as before.
    expect(argumentsFromForm(fields, { "arg.query": "" }, withExtra)).toEqual({ args: { dry_run: true } });
  });

  it("names the field a form got wrong", () => {
    const fields = argumentFields(lenient, asked)!;
    expect(argumentsFromForm(fields, { "arg.title": "t", "arg.count": "two" }, asked)).toEqual({ problem: 'arguments.count: "two" is not a number' });
    expect(argumentsFromForm(fields, { "arg.title": "t", "arg.draft": "maybe" }, asked)).toEqual({ problem: "arguments.draft: choose true or false" });
    expect(argumentsFromForm(fields, { "arg.title": "t", "arg.label": '"feature"' }, asked)).toEqual({ problem: "arguments.label: not one of the choices" });
    expect(argumentsFromForm(fields, { "arg.title": "t", "arg.meta": "{" }, asked)).toEqual({ problem: "arguments.meta: not valid JSON" });
    expect(argumentsFromJson("[1]")).toEqual({ problem: "arguments: must be a JSON object" });
    expect(argumentsFromJson("{")).toEqual({ problem: "arguments: not valid JSON" });
  });

  it("a text box's CRLF reads back as LF; a property named __proto__ stays an own field", () => {
    const schema = { type: "object", properties: { body: { type: "string" }, __proto__: { type: "string" } } };
    const real = JSON.parse('{"type":"object","properties":{"body":{"type":"string"},"__proto__":{"type":"string"}}}');
    expect(argumentFields(schema, {})!.map((f) => f.name)).toEqual(["body"]);
    const fields = argumentFields(real, {})!;
    expect(fields.map((f) => f.name)).toEqual(["body", "__proto__"]);
    const read = argumentsFromForm(fields, { "arg.body": "a\r\nb", "arg.__proto__": "x" }, {}) as { args: Record<string, unknown> };
    expect(Object.getPrototypeOf(read.args)).toBe(Object.prototype);
    expect(JSON.stringify(read.args)).toBe('{"body":"a\\nb","__proto__":"x"}');
  });
});

describe("what the model is told of a call a person changed", () => {
  // The gate marks a call it applied a person's edit or answer to; the note reads the decision then.
  const journal = (decision: unknown) => ({
    get: <T>(key: string) => (key === "w/turn:1/tool:1/approval" ? (decision as T) : undefined),
    changedByPerson: (call: string) => decision !== undefined && call === "w/turn:1/tool:1",
  });

  it("an edit names the arguments it ran with and the note; an answer says the tool did not run; else the content as it is", () => {
    const edited = { approved: true, by: "api", args: { body: "b" }, note: "typo" };
    expect(withEditNote(journal(edited), "w/turn:1/tool:1", "ok")).toBe(
      '[A person edited this call\'s arguments before approving it; it was called with {"body":"b"}. The approver\'s note: typo]\nok',
    );
    expect(withEditNote(journal({ approved: false, by: "api", response: "no" }), "w/turn:1/tool:1", "no")).toBe(
      "[A person answered in place of this call: the tool did not run. Their answer follows.]\nno",
    );
    expect(withEditNote(journal({ approved: true, by: "api" }), "w/turn:1/tool:1", "ok")).toBe("ok");
    expect(withEditNote(journal(undefined), "w/turn:1/tool:1", "ok")).toBe("ok");
    const long = withEditNote(journal({ approved: true, by: "api", args: { body: "z".repeat(10_000) } }), "w/turn:1/tool:1", "ok");
    expect(long.length).toBeLessThan(4200);
  });
});
