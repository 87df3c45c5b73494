import { ToolError } from "../errors";
import type { CallFrame } from "../call-frame";
import { allowList } from "../net/allow-list";
import { guardedFetch } from "../net/guarded-fetch";
import { readBodyCapped } from "../net/read-body";
import type { RunServices } from "../run";
import { interpolate } from "../toolsets/interpolate";
import { http } from "../toolsets/kinds/http";
import { essence, typeByName } from "./mime";

interface HttpConfig {
  allow: string[];
  headers: Record<string, string>;
  timeout_ms: number;
}

/**
 * Fetches an https attachment through the first of the caller's `http` instances
 * whose allow-list admits the URL, by that instance's rules: every redirect hop
 * checked, its configured headers sent to the URL's origin only, the body read as
 * a stream up to `maxBytes`.
 */
export async function fetchForAttachment(run: RunServices, caller: CallFrame, ref: string, maxBytes: number) {
  let url: URL;
  try {
    url = new URL(ref);
  } catch {
    throw new ToolError(`attachment "${ref}" is not a valid URL`);
  }
  if (url.protocol !== "https:") throw new ToolError(`attachment "${ref}": only https URLs can be attachments`);
  const instances = Object.entries(caller.worker.toolsets).filter(([, spec]) => spec.use === http.kind);
  const configs = instances.map(([name, spec]) => {
    const field = { file: caller.worker.file, field: `toolsets.${name}` };
    return http.config.parse(interpolate(spec.config, run.vars, field).config) as HttpConfig;
  });
  const config = configs.find((c) => allowList(c.allow).allows(url));
  if (!config) {
    const reach = instances.map(([name], i) => `${name}: ${configs[i]!.allow.join(", ")}`).join("; ");
    throw new ToolError(`attachment "${ref}": host ${url.host} is not allowed by any http instance of ${caller.worker.name}${reach ? ` (${reach})` : " (it has none)"}`);
  }
  const fetch = guardedFetch({ allow: allowList(config.allow), headers: config.headers });
  let res;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(config.timeout_ms) });
  } catch (err) {
    if (err instanceof ToolError) throw new ToolError(`attachment "${ref}": ${err.message}`);
    throw new ToolError(`attachment "${ref}": request to ${url.host} failed: ${String(err)}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new ToolError(`attachment "${ref}": ${url.host} answered ${res.status}`);
  }
  const body = await readBodyCapped(res, maxBytes);
  const name = url.pathname.slice(url.pathname.lastIndexOf("/") + 1) || url.hostname;
  return { bytes: body.bytes, truncated: body.truncated, name, type: essence(res.headers.get("content-type")) ?? typeByName(url.pathname) };
}
