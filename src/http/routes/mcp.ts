import { Hono } from "hono/tiny";
import { apiToken } from "../middleware/api-token";
import { bodyLimit } from "../middleware/body-limit";
import { StatelessTransport } from "../../mcp/stateless-transport";
import { workersServer } from "../../mcp/workers-server";

/**
 * `/mcp`: the workers as an MCP server (Streamable HTTP, stateless: a server and
 * transport per request), behind the API token.
 */
export const mcp = new Hono<{ Bindings: Env }>();

mcp.use(apiToken());
// Bounded like the API's bodies, after the token check.
mcp.use(bodyLimit());
mcp.all("/", async (c) => {
  const transport = new StatelessTransport();
  await workersServer(c.env, new URL(c.req.url).origin).connect(transport);
  return transport.handle(c.req.raw);
});
