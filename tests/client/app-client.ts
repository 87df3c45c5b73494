import { env, exports } from "cloudflare:workers";
import { app } from "../../src/http/app";
import { EdgeworkClient, type ClientOptions } from "../../src/client";

/** The client with the app itself as its fetch (no network); `vars` over the test env (e.g. SSE_MAX_MS) go through app.fetch. */
export function appClient(opts: Partial<ClientOptions> & { vars?: Record<string, string>; seen?: Request[] } = {}): EdgeworkClient {
  const { vars, seen, ...rest } = opts;
  return new EdgeworkClient({
    baseURL: "https://edgework.test",
    apiToken: "test-token",
    fetch: async (input, init) => {
      const req = new Request(input, init);
      seen?.push(req.clone());
      return vars ? app.fetch(req, { ...env, ...vars }) : exports.default.fetch(req);
    },
    ...rest,
  });
}
