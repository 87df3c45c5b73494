/**
 * Stands in for the MCP SDK's OAuth client (`client/auth.js`, with pkce-challenge: ~6 KiB
 * of the bundle gzipped) through wrangler.toml's `[alias]` (the key is the specifier the
 * SDK's `client/streamableHttp.js` imports it by). The transport reaches it only with an
 * `authProvider`, which edgework never passes: an MCP server's credentials are headers in
 * the instance's config.
 */
const notBundled = (): never => {
  throw new Error(
    'the MCP SDK\'s OAuth client is not bundled (wrangler.toml [alias] "./auth.js"); if your own module is imported as "./auth.js", import it by another name',
  );
};

export class UnauthorizedError extends Error {}
export const auth = notBundled;
export const extractWWWAuthenticateParams = notBundled;
