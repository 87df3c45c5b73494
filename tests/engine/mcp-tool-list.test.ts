import { describe, expect, it } from "vitest";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { stepBytes, MAX_STEP_BYTES } from "../../src/engine/journal/bounds";
import { MCP_TOOL_LIMITS, offeredTools } from "../../src/engine/mcp/tool-list";
import { SCHEMA_BOUNDS } from "../../src/engine/schema-bounds";

const opts = { keep: () => true, maxNameLength: 60, label: 'MCP server "gh" (mcp.example.com)' };
/** A tool whose schema and description sit just under the per-tool limits (non-ASCII, so bytes exceed characters). */
const fat = (i: number): Tool => ({
  name: `tool_${i}`,
  description: "é".repeat(MCP_TOOL_LIMITS.descriptionChars),
  inputSchema: { type: "object", properties: { p: { type: "string", description: "ü".repeat(SCHEMA_BOUNDS.chars - 200) } } },
});

describe("the tool list an MCP server may hand us", () => {
  it("is refused when the whole offered list would be too large to journal, even if each tool is within its own limits", () => {
    const tools = Array.from({ length: MCP_TOOL_LIMITS.tools }, (_, i) => fat(i));
    expect(() => offeredTools(tools, opts)).toThrow(/the offered tools take \d+ bytes \(at most 1000000\); list the ones this worker needs under "tools:"/);
  });

  it("a list under the total bound fits one journal step", () => {
    const list = offeredTools(
      Array.from({ length: 20 }, (_, i) => fat(i)),
      opts,
    );
    expect(list).toHaveLength(20);
    expect(stepBytes("w/tools:gh", list)).toBeLessThan(MAX_STEP_BYTES);
  });
});
