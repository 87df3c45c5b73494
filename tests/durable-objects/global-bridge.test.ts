import { describe, expect, it } from "vitest";
import { ToolContextBridge } from "../../durable-objects/global-toolsets-bridge";
import { ApprovalRequired, ToolError, type PendingApproval, type ToolContext } from "../../src/engine";

const pending = (tool: string): PendingApproval => ({ key: `k/${tool}`, id: tool, callPath: "p", workerChain: [], tool, args: {}, description: tool });

describe("a global tool's ctx over RPC (ToolContextBridge)", () => {
  it("a signal met on the run's side is kept there (parallel pauses merged) and the singleton only hears that one was met", async () => {
    const ctx = {
      callTool: async (name: string) => Promise.reject(name === "fails" ? new ToolError("refused") : new ApprovalRequired([pending(name)])),
    } as unknown as ToolContext;
    const bridge = new ToolContextBridge(ctx);
    expect(await Promise.all([bridge.callTool("a", {}), bridge.callTool("b", {})])).toEqual([{ signalled: true }, { signalled: true }]);
    expect((bridge.signal as ApprovalRequired).pending.map((p) => p.tool)).toEqual(["a", "b"]);
    // A real failure still reaches the global tool as an error it may catch.
    await expect(bridge.callTool("fails", {})).rejects.toThrow("refused");
  });
});
