import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { ToolError } from "../errors";
import { schemaBoundsProblem } from "../schema-bounds";
import type { ToolData } from "../toolsets/wrappers/journaled-tools";

/**
 * What one server may hand a worker's model (and the journal). `totalBytes` bounds the
 * whole offered list as it is journaled (UTF-8 JSON), well under one journal step's bound.
 * Each input and output schema is bounded by `SCHEMA_BOUNDS`.
 */
export const MCP_TOOL_LIMITS = { listed: 1_000, tools: 100, descriptionChars: 1_000, totalBytes: 1_000_000 } as const;

const NAME = /^[a-zA-Z0-9_-]+$/;

/**
 * The server's tools as this instance offers them: names a model can call (the
 * OpenAI rule, counting the instance prefix), those `keep` accepts, read-only
 * when annotated `readOnlyHint: true`, with descriptions cut; a tool whose schema is
 * over `SCHEMA_BOUNDS` is refused by name.
 */
export function offeredTools(tools: Tool[], opts: { keep: (name: string) => boolean; maxNameLength: number; label: string }): ToolData[] {
  if (tools.length > MCP_TOOL_LIMITS.listed) throw new ToolError(`${opts.label} lists more than ${MCP_TOOL_LIMITS.listed} tools`);
  const offered = tools.filter((t) => typeof t.name === "string" && t.name.length <= opts.maxNameLength && NAME.test(t.name) && opts.keep(t.name));
  if (offered.length > MCP_TOOL_LIMITS.tools) {
    throw new ToolError(`${opts.label} offers more than ${MCP_TOOL_LIMITS.tools} tools; list the ones this worker needs under "tools:"`);
  }
  const list = offered.map((t) => {
    for (const [which, schema] of [
      ["input", t.inputSchema],
      ["output", t.outputSchema],
    ] as const) {
      const problem = schema === undefined ? undefined : schemaBoundsProblem(schema);
      if (problem) throw new ToolError(`${opts.label}: the ${which} schema of tool "${t.name}" ${problem}; leave it out with "tools:"`);
    }
    const description = t.description || t.title || t.name;
    return {
      name: t.name,
      description: description.length > MCP_TOOL_LIMITS.descriptionChars ? `${description.slice(0, MCP_TOOL_LIMITS.descriptionChars)}…` : description,
      parameters: t.inputSchema as Record<string, unknown>,
      readOnly: t.annotations?.readOnlyHint === true,
    };
  });
  const bytes = new TextEncoder().encode(JSON.stringify(list)).length;
  if (bytes > MCP_TOOL_LIMITS.totalBytes) {
    throw new ToolError(
      `${opts.label}: the offered tools take ${bytes} bytes (at most ${MCP_TOOL_LIMITS.totalBytes}); list the ones this worker needs under "tools:"`,
    );
  }
  return list;
}
