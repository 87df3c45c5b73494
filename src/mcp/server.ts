import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  InitializedNotificationSchema,
  InitializeRequestSchema,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  type ServerCapabilities,
  type ServerNotification,
  type ServerRequest,
  type ServerResult,
} from "@modelcontextprotocol/sdk/types.js";

/**
 * The MCP server edgework needs — it answers `initialize` (the client's protocol
 * version when supported, else the latest) and the handlers set on it — on the SDK's
 * `Protocol`. The SDK's own `Server` imports ajv for a default validator of
 * elicitation answers, a request this server never makes; see src/engine/mcp/client.ts.
 */
export class McpServer extends Protocol<ServerRequest, ServerNotification, ServerResult> {
  constructor(info: { name: string; version: string }, capabilities: ServerCapabilities) {
    super();
    this.setRequestHandler(InitializeRequestSchema, (req) => ({
      protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(req.params.protocolVersion) ? req.params.protocolVersion : LATEST_PROTOCOL_VERSION,
      capabilities,
      serverInfo: info,
    }));
    this.setNotificationHandler(InitializedNotificationSchema, () => undefined);
  }

  // Requests carry no capability checks here: the server sends none of its own.
  protected assertCapabilityForMethod(): void {}
  protected assertNotificationCapability(): void {}
  protected assertRequestHandlerCapability(): void {}
  protected assertTaskCapability(): void {}
  protected assertTaskHandlerCapability(): void {}
}
