import { ToolError } from "../errors";
import { policyNow, type CallPolicy } from "../approvals/call-policy";
import { allowList } from "../net/allow-list";
import { whenConnected, type Connections } from "../net/connection-slots";
import { guardedFetch } from "../net/guarded-fetch";
import { readBodyCapped } from "../net/read-body";
import { interpolate, type Substitution } from "../toolsets/interpolate";
import { http } from "../toolsets/kinds/http";
import { redactor } from "../toolsets/redactor";
import { essence, typeByName } from "./mime";
import { withoutSecrets } from "./without-secrets";
import type { CallFrame } from "../types/callable";

/** The run's values for `${NAME}` in the caller's `http` configs, and which of those filled in are secrets. */
export interface RunVars {
  readonly vars: Readonly<Record<string, string | undefined>>;
  secretsOf(filled: readonly Substitution[]): Substitution[];
  /** Where the activation's requests take their turn (net/connection-slots.ts). */
  readonly connections: Connections;
}

interface HttpConfig {
  allow: string[];
  headers: Record<string, string>;
  timeout_ms: number;
}

/**
 * Fetches an https attachment through the first of the caller's `http` instances
 * whose allow-list admits the URL and whose `fetch` the worker lets run unasked, by
 * that instance's rules: every redirect hop checked, its configured headers sent to
 * the URL's origin only, the body read as a stream up to `maxBytes`, and that
 * instance's secrets kept out of what is returned (`withoutSecrets`: a redacted text
 * can grow past `maxBytes`, which counts as truncated).
 */
export async function fetchForAttachment(run: RunVars, caller: CallFrame, ref: string, maxBytes: number) {
  let url: URL;
  try {
    url = new URL(ref);
  } catch {
    throw new ToolError(`attachment "${ref}" is not a valid URL`);
  }
  if (url.protocol !== "https:") throw new ToolError(`attachment "${ref}": only https URLs can be attachments`);
  const instances = Object.entries(caller.worker.toolsets)
    .filter(([, spec]) => spec.use === http.kind)
    .map(([name, spec]) => {
      const field = { file: caller.worker.file, field: `toolsets.${name}` };
      const { config, substituted } = interpolate(spec.config, run.vars, field);
      return { name, readonly: spec.readonly === true, config: http.config.parse(config) as HttpConfig, secrets: run.secretsOf(substituted) };
    });
  const reaching = instances.filter((i) => allowList(i.config.allow).allows(url));
  if (!reaching.length) {
    const reach = instances.map((i) => `${i.name}: ${redactor(i.secrets)(i.config.allow.join(", "))}`).join("; ");
    throw new ToolError(
      `attachment "${ref}": host ${url.host} is not allowed by any http instance of ${caller.worker.name}${reach ? ` (${reach})` : " (it has none)"}`,
    );
  }
  const refusals = reaching.map((i) => fetchRefusal(caller, i.name, i.readonly, url));
  const chosen = reaching.find((_, n) => refusals[n] === undefined);
  if (!chosen) throw new ToolError(`attachment "${ref}": ${caller.worker.name} may not fetch it unasked: ${refusals.join("; ")}`);
  const { config, secrets } = chosen;
  let res: Response;
  try {
    // The instance's timeout_ms counts from when the request starts, not from its wait for a connection.
    res = await whenConnected(run.connections, (fetch) =>
      guardedFetch({ allow: allowList(config.allow), headers: config.headers, fetch })(url, { signal: AbortSignal.timeout(config.timeout_ms) }),
    );
  } catch (err) {
    // A refused redirect quotes the upstream's Location, which may echo a header.
    const redact = redactor(secrets);
    if (err instanceof ToolError) throw new ToolError(redact(`attachment "${ref}": ${err.message}`));
    throw new ToolError(redact(`attachment "${ref}": request to ${url.host} failed: ${String(err)}`));
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new ToolError(`attachment "${ref}": ${url.host} answered ${res.status}`);
  }
  const body = await readBodyCapped(res, maxBytes);
  const name = url.pathname.slice(url.pathname.lastIndexOf("/") + 1) || url.hostname;
  const type = essence(res.headers.get("content-type")) ?? typeByName(url.pathname);
  if (body.truncated) return { bytes: body.bytes, truncated: true, name, type };
  const bytes = withoutSecrets(
    body.bytes,
    type,
    secrets,
    (vars) => `attachment "${ref}" (${type}) holds the value of ${vars}, a secret its http instance sends; it is not attached`,
  );
  return { bytes, truncated: bytes.length > maxBytes, name, type };
}

/**
 * Why instance `name` may not fetch an attachment URL, or undefined when it may: a
 * GET through it must be one the worker allows without asking, as its `fetch` tool
 * would be gated (`approval:` for the exposed name wins over the kind's default).
 * An attachment is fetched inside another tool call, so there is no approval of its
 * own to wait for; `ask` refuses, with the way that does ask.
 */
function fetchRefusal(caller: CallFrame, name: string, readonly: boolean, url: URL): string | undefined {
  const tool = name === http.kind ? "fetch" : `${name}_fetch`;
  if (readonly) return `http instance "${name}" is readonly (it offers no ${tool})`;
  const def = http.definitions.find((d) => d.name === "fetch")!;
  let chosen: CallPolicy | undefined;
  try {
    chosen = policyNow(caller.worker.approval[tool], def, { url: url.href, method: "GET" });
  } catch {
    chosen = undefined;
  }
  const policy = chosen?.policy ?? "ask";
  const rule = chosen?.rule === undefined ? "" : ` (${chosen.rule})`;
  if (policy === "deny") return `approval.${tool} is deny in ${caller.worker.file}${rule}`;
  if (policy === "ask")
    return `approval.${tool} is ask in ${caller.worker.file}${rule}; fetch it with ${tool} and save_to (which asks), then attach the saved file`;
  return undefined;
}
