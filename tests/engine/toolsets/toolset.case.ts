import { describe, expect, it } from "vitest";
import { MemoryStateBackend, ToolError, type ToolContext, type ToolsetKind } from "../../../src/engine";
import { instanceInit } from "../../../src/engine/toolsets/instances";
import { TOOL_NAME } from "../../../src/engine/catalog/worker-file";
import { UsageMeter } from "../../../src/engine/run/usage";

/** A context for calling a kind's tools directly; effects that need a run refuse. */
export function bareContext(): ToolContext {
  const refuse = async () => {
    throw new Error("not available in the toolset case suite");
  };
  return {
    runId: "case",
    callPath: "case/turn:1/tool:t",
    idempotencyKey: "ew_case",
    depth: 1,
    workerChain: ["case"],
    usage: new UsageMeter(),
    state: new MemoryStateBackend().open("call", "case", "ctx"),
    llmAsk: refuse,
    llmAgent: refuse,
    callTool: refuse,
    callWorker: refuse,
    step: async (_k, fn) => fn(),
    now: async () => 0,
    randomId: async () => "id",
    // Nobody answers here: as a question that expired.
    askHuman: async () => ({ answered: false, reason: "no person in the toolset case suite" }),
    sleep: refuse,
    sleepUntil: refuse,
    waitForEvent: refuse,
    setAttribute: refuse,
    schedule: refuse,
    spawn: refuse,
    map: refuse,
  };
}

/**
 * The behaviour every toolset kind shares. Each kind's test calls this with a
 * valid config, one config the kind must refuse, and a tool call that works.
 */
export function toolsetKindCases(kind: ToolsetKind, opts: { config: unknown; badConfig: unknown; call: { tool: string; args: unknown } }) {
  describe(`toolset kind "${kind.kind}": shared behaviour`, () => {
    const instance = () =>
      kind.instantiate(`${kind.kind}#case`, kind.config.parse(opts.config), instanceInit(new MemoryStateBackend(), "call", "case", kind.kind, "case"));

    it("declares tools with unique tool-rule names, a description and object parameters", () => {
      const names = kind.definitions.map((d) => d.name);
      expect(new Set(names).size).toBe(names.length);
      for (const d of kind.definitions) {
        expect(d.name).toMatch(TOOL_NAME);
        expect(d.description.length).toBeGreaterThan(0);
        expect(d.parameters).toMatchObject({ type: "object" });
      }
    });

    it("has a safe default approval for every tool: read-only tools allow, the others decide", () => {
      for (const d of kind.definitions) {
        const policy = d.approval({});
        expect(["allow", "ask", "deny"]).toContain(policy);
        if (d.readOnly) expect(policy).toBe("allow");
      }
    });

    it("refuses a bad config through its schema", () => {
      expect(kind.config.safeParse(opts.config).success).toBe(true);
      expect(kind.config.safeParse(opts.badConfig).success).toBe(false);
    });

    it("lists what it declares and runs a valid call", async () => {
      const ts = await instance();
      expect((await ts.listTools()).map((t) => t.name)).toEqual(kind.definitions.map((d) => d.name));
      await expect(ts.callTool(opts.call.tool, opts.call.args, bareContext())).resolves.toBeDefined();
      await ts.close?.();
    });

    it("answers invalid arguments and unknown tools with a ToolError the model can read", async () => {
      const ts = await instance();
      for (const d of kind.definitions) {
        const err = (await ts.callTool(d.name, { definitely_not_an_argument: true }, bareContext()).catch((e) => e)) as Error;
        expect(err, d.name).toBeInstanceOf(ToolError);
        expect(err.message).toMatch(new RegExp(`^invalid arguments for ${d.name}: `));
      }
      await expect(ts.callTool("no_such_tool", {}, bareContext())).rejects.toBeInstanceOf(ToolError);
    });
  });
}
