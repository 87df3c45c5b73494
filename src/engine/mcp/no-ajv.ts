/**
 * Stands in for `ajv` and `ajv-formats` in the bundle (wrangler.toml `[alias]`).
 * The MCP SDK imports ajv as its default validator; edgework always passes
 * `@cfworker/json-schema` instead (workerd refuses ajv's `new Function`), so
 * this is never called, and the bundle is ~40 KiB gzipped lighter.
 */
export default function noAjv(): never {
  throw new Error("ajv is not bundled: MCP schemas are validated with @cfworker/json-schema");
}
