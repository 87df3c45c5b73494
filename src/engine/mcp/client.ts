import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ErrorCode,
  InitializeResultSchema,
  LATEST_PROTOCOL_VERSION,
  ListToolsResultSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolResult,
  type ClientNotification,
  type ClientRequest,
  type ClientResult,
  type ListToolsResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";

/**
 * The MCP client edgework needs — initialize, list tools, call a tool and check its
 * structured content against the tool's output schema — on the SDK's `Protocol`.
 * The SDK's own `Client` imports ajv for a default validator (even when given
 * another), which would put ~40 KiB gzip and ~12 ms of start-up into every
 * deployment; this one has no default, and asks for nothing the server may send
 * back (no sampling, roots or elicitation).
 */
export class McpClient extends Protocol<ClientRequest, ClientNotification, ClientResult> {
  private readonly outputValidators = new Map<string, JsonSchemaValidator<unknown>>();

  constructor(
    private readonly info: { name: string; version: string },
    private readonly validator: jsonSchemaValidator,
  ) {
    super();
  }

  /** Connects and initializes; on failure the transport is closed. */
  override async connect(transport: Transport, options?: RequestOptions): Promise<void> {
    await super.connect(transport);
    try {
      const result = await this.request(
        { method: "initialize", params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: this.info } },
        InitializeResultSchema,
        options,
      );
      if (!SUPPORTED_PROTOCOL_VERSIONS.includes(result.protocolVersion))
        throw new Error(`Server's protocol version is not supported: ${result.protocolVersion}`);
      // HTTP transports send the negotiated version in a header from now on.
      transport.setProtocolVersion?.(result.protocolVersion);
      await this.notification({ method: "notifications/initialized" });
    } catch (err) {
      void this.close();
      throw err;
    }
  }

  /** One page of the server's tools; the output schemas are kept to check later calls. */
  async listTools(params?: { cursor: string }, options?: RequestOptions): Promise<ListToolsResult> {
    const result = await this.request({ method: "tools/list", ...(params ? { params } : {}) }, ListToolsResultSchema, options);
    for (const tool of result.tools) if (tool.outputSchema) this.outputValidators.set(tool.name, this.validator.getValidator(tool.outputSchema));
    return result;
  }

  /** A tool call; a tool with an output schema must answer structured content that matches it (an error answer may have none). */
  async callTool(params: { name: string; arguments: Record<string, unknown> }, options?: RequestOptions): Promise<CallToolResult> {
    const result = await this.request({ method: "tools/call", params }, CallToolResultSchema, options);
    const validate = this.outputValidators.get(params.name);
    if (!validate) return result;
    if (!result.structuredContent) {
      if (result.isError) return result;
      throw new McpError(ErrorCode.InvalidRequest, `Tool ${params.name} has an output schema but did not return structured content`);
    }
    let checked: ReturnType<typeof validate>;
    try {
      checked = validate(result.structuredContent);
    } catch (err) {
      throw new McpError(ErrorCode.InvalidParams, `Failed to validate structured content: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (!checked.valid) throw new McpError(ErrorCode.InvalidParams, `Structured content does not match the tool's output schema: ${checked.errorMessage}`);
    return result;
  }

  // Capabilities are not enforced (the SDK's Client checks them only with `enforceStrictCapabilities`).
  protected assertCapabilityForMethod(): void {}
  protected assertNotificationCapability(): void {}
  protected assertRequestHandlerCapability(): void {}
  protected assertTaskCapability(): void {}
  protected assertTaskHandlerCapability(): void {}
}
