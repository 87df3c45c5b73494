import { describe, expect, it } from "vitest";
import { ApprovalRequired, MemoryJournalStore, ToolError, type PendingApproval, type Toolset } from "../../../src/engine";
import { CreatedWorkers } from "../../../src/engine/run/created-workers";
import { Journal } from "../../../src/engine/journal/journal";
import { approvalKey, creationKey, resultKey, toolsKey } from "../../../src/engine/journal/keys";
import type { ToolDef } from "../../../src/engine/types/toolset";
import { approvalGated } from "../../../src/engine/toolsets/wrappers/approval";
import { filtered, readOnly } from "../../../src/engine/toolsets/wrappers/filtered";
import { journaled } from "../../../src/engine/toolsets/wrappers/journaled";
import { journaledTools } from "../../../src/engine/toolsets/wrappers/journaled-tools";
import { prefixed } from "../../../src/engine/toolsets/wrappers/prefixed";
import { redacted } from "../../../src/engine/toolsets/wrappers/redacted";
import { showsCreated } from "../../../src/engine/toolsets/wrappers/shows-created";
import { bareContext } from "./toolset.case";

const def = (name: string, readOnly = true, policy: "allow" | "ask" | "deny" = "allow"): ToolDef => ({
  name,
  description: `the ${name} tool`,
  parameters: { type: "object" },
  readOnly,
  approval: () => policy,
});

/** An inner toolset that records what reaches it. */
function fakeInner(tools: ToolDef[] = [def("read"), def("write", false, "ask")], answer: (name: string) => unknown = (name) => ({ called: name })) {
  const calls: string[] = [];
  let closed = 0;
  const toolset: Toolset = {
    id: "inner#1",
    listTools: async () => tools,
    callTool: async (name) => {
      calls.push(name);
      return answer(name);
    },
    close: async () => void closed++,
  };
  return { toolset, calls, closed: () => closed };
}

const journal = () => Journal.open(new MemoryJournalStore());
const ctx = (callPath = "run/turn:1/tool:0") => ({ ...bareContext(), callPath });

/** Every wrapper over `inner`, as the engine builds them. */
async function everyWrapper(inner: Toolset): Promise<Array<[string, Toolset]>> {
  const j = await journal();
  return [
    ["prefixed", prefixed(inner, "src")],
    ["filtered", filtered(inner, () => true)],
    ["readOnly", readOnly(inner)],
    ["approvalGated", approvalGated(inner, { journal: j, mode: "ask", policies: {}, workerChain: ["w"], host: {}, remembered: new Set() })],
    ["journaled", journaled(inner, j)],
    ["journaledTools", journaledTools(inner, j, toolsKey("run", "src"))],
    ["redacted", redacted(inner, [{ name: "TOKEN", value: "s3cret-value" }])],
    ["showsCreated", showsCreated(inner, { journal: j, created: new CreatedWorkers(), path: "run", tools: new Set() })],
  ];
}

describe("toolset wrappers", () => {
  it("every wrapper forwards its inner toolset's id and close", async () => {
    const inner = fakeInner();
    const wrappers = await everyWrapper(inner.toolset);
    for (const [name, w] of wrappers) {
      expect(w.id, name).toBe("inner#1");
      await w.close?.();
    }
    expect(inner.closed()).toBe(wrappers.length);
  });

  it("prefixed: lists with the prefix, strips it when called, refuses a name without it", async () => {
    const inner = fakeInner();
    const w = prefixed(inner.toolset, "src");
    expect((await w.listTools()).map((t) => t.name)).toEqual(["src_read", "src_write"]);
    expect(await w.callTool("src_read", {}, ctx())).toEqual({ called: "read" });
    await expect(w.callTool("read", {}, ctx())).rejects.toThrow(ToolError);
    await expect(w.callTool("read", {}, ctx())).rejects.toThrow(/unknown tool "read"/);
    expect(inner.calls).toEqual(["read"]);
  });

  it("readOnly: shows and calls only tools that change nothing", async () => {
    const inner = fakeInner();
    const w = readOnly(inner.toolset);
    expect((await w.listTools()).map((t) => t.name)).toEqual(["read"]);
    await expect(w.callTool("write", {}, ctx())).rejects.toThrow(/tool "write" is not available here/);
    expect(inner.calls).toEqual([]);
  });

  it("approvalGated: an allowed call goes straight through, an ask suspends until decided, a rejection is the tool's error", async () => {
    const inner = fakeInner();
    const j = await journal();
    const recorded: PendingApproval[] = [];
    const notified: string[] = [];
    const w = approvalGated(inner.toolset, {
      journal: j,
      mode: "ask",
      policies: {},
      workerChain: ["w"],
      // The notifier finds the approval recorded already: recording is the run's, notifying only tells.
      host: { record: (p) => void recorded.push(p), notifier: async (p) => notified.push(`${p.id} after ${recorded.length} recorded`) },
      remembered: new Set(),
    });
    await w.listTools();
    expect(await w.callTool("read", {}, ctx())).toEqual({ called: "read" });
    await expect(w.callTool("write", { x: 1 }, ctx("run/turn:1/tool:1"))).rejects.toThrow(ApprovalRequired);
    expect(recorded).toMatchObject([{ key: approvalKey("run/turn:1/tool:1"), tool: "write", args: { x: 1 }, workerChain: ["w"] }]);
    expect(notified).toEqual([`${recorded[0]!.id} after 1 recorded`]);
    await j.record(approvalKey("run/turn:1/tool:1"), { approved: false, by: "boss", note: "no" });
    await expect(w.callTool("write", { x: 1 }, ctx("run/turn:1/tool:1"))).rejects.toThrow("the call to write was rejected by boss: no");
    expect(inner.calls).toEqual(["read"]);
  });

  it("journaled: a call runs once per key, its outcome replayed", async () => {
    const inner = fakeInner();
    const j = await journal();
    const w = journaled(inner.toolset, j);
    expect(await w.callTool("read", {}, ctx())).toEqual({ called: "read" });
    expect(await w.callTool("read", {}, ctx())).toEqual({ called: "read" });
    expect(inner.calls).toEqual(["read"]);
    expect(j.get(resultKey(ctx().callPath))).toMatchObject({ ok: true, name: "read" });
  });

  it("journaledTools: the list is recorded once and replayed, whatever the source lists later", async () => {
    const tools = [def("a")];
    const j = await journal();
    const key = toolsKey("run", "src");
    expect((await journaledTools(fakeInner(tools).toolset, j, key).listTools()).map((t) => t.name)).toEqual(["a"]);
    tools.push(def("b"));
    expect((await journaledTools(fakeInner(tools).toolset, j, key).listTools()).map((t) => t.name)).toEqual(["a"]);
  });

  it("redacted: a secret in a result comes back redacted", async () => {
    const inner = fakeInner(undefined, () => ({ echoed: "Bearer s3cret-value" }));
    const w = redacted(inner.toolset, [{ name: "TOKEN", value: "s3cret-value" }]);
    expect(await w.callTool("read", {}, ctx())).toEqual({ echoed: "Bearer [redacted:TOKEN]" });
  });

  it("showsCreated: a recorded creation shows the created worker to its creator", async () => {
    const j = await journal();
    const created = new CreatedWorkers();
    const w = showsCreated(fakeInner().toolset, { journal: j, created, path: "run", tools: new Set(["read"]) });
    await w.callTool("read", {}, ctx());
    expect(created.shownTo("run")).toEqual([]);
    await j.record(creationKey(ctx().callPath), { frontmatter: { name: "made" }, instructions: "", creator: "run", by: "w.md", grant: "w.md#make" });
    await w.callTool("read", {}, ctx());
    expect(created.shownTo("run")).toEqual(["made"]);
  });
});
