import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ToolError } from "../errors";

type Part = CallToolResult["content"][number];

/** Bytes of base64 data, without decoding it. */
const base64Bytes = (data: string) => Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);

/**
 * One content part as text. The engine's messages carry text only, so images and
 * audio become a placeholder naming their type and size.
 */
function partText(p: Part): string {
  switch (p.type) {
    case "text":
      return p.text;
    case "image":
    case "audio":
      return `[${p.type}: ${p.mimeType}, ${base64Bytes(p.data)} bytes, not shown]`;
    case "resource":
      return "text" in p.resource && typeof p.resource.text === "string"
        ? p.resource.text
        : `[resource: ${p.resource.uri}${p.resource.mimeType ? `, ${p.resource.mimeType}` : ""}, not shown]`;
    case "resource_link":
      return `[resource link: ${p.name} ${p.uri}]`;
    default:
      return `[${String((p as { type?: unknown }).type)} content, not shown]`;
  }
}

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}… [cut: ${text.length - max} more characters]` : text);

/**
 * An MCP tool result as the tool's value: the text parts joined, plus
 * `structuredContent` as JSON when the server sent it, each cut to `maxChars`.
 * `isError` becomes a `ToolError` the model reads.
 */
export function toolValue(result: CallToolResult, maxChars: number, label: string): unknown {
  const text = cut((Array.isArray(result.content) ? result.content : []).map(partText).join("\n"), maxChars);
  if (result.isError) throw new ToolError(`${label}: ${text || "the tool reported an error"}`);
  if (result.structuredContent === undefined) return text;
  const json = JSON.stringify(result.structuredContent);
  return json.length > maxChars
    ? { text, structured_content_omitted: `${json.length} characters, more than ${maxChars}` }
    : { text, structured_content: result.structuredContent };
}
