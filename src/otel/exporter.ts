import { utf8Bytes } from "../engine/journal/bounds";
import type { TraceSpan } from "../engine/trace/span";
import { exportRequest, runIds, spanJson, type TraceParent } from "./otlp-json";

/** The standard OpenTelemetry variables this exporter reads (OTEL_EXPORTER_OTLP_HEADERS: a secret). */
export interface OtelVars {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_HEADERS?: string;
  OTEL_CAPTURE_CONTENT?: string;
  OTEL_SERVICE_NAME?: string;
}

export interface OtlpSettings {
  /** Where spans are POSTed: `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`, or the traces endpoint as given. */
  url: string;
  headers: Record<string, string>;
  captureContent: boolean;
  serviceName: string;
}

/** What one activation may send: spans past these are dropped (one log line), never queued. */
export const EXPORT_LIMITS = { maxSpans: 512, maxBytes: 512 * 1024, timeoutMs: 5_000 };

/** Tracing's settings, or null when no endpoint is set (or it is not an http(s) URL: tracing stays off). */
export function otlpSettings(vars: OtelVars): OtlpSettings | null {
  const base = vars.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const url = vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || (base ? `${base.replace(/\/+$/, "")}/v1/traces` : "");
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) return null;
  return {
    url,
    headers: parseHeaders(vars.OTEL_EXPORTER_OTLP_HEADERS ?? ""),
    captureContent: vars.OTEL_CAPTURE_CONTENT?.trim().toLowerCase() === "true",
    serviceName: vars.OTEL_SERVICE_NAME?.trim() || "edgework",
  };
}

/** `k1=v1,k2=v2` with percent-encoded values (the OpenTelemetry spec's format); a malformed pair is skipped. */
export function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of text.split(",")) {
    const eq = pair.indexOf("=");
    if (eq <= 0) continue;
    try {
      headers[pair.slice(0, eq).trim()] = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      // A bad escape: the header is left out rather than sent mangled.
    }
  }
  return headers;
}

export interface ExportResult {
  sent: number;
  dropped: number;
  bytes: number;
  /** Why the batch did not arrive: an HTTP status or an error's name (never its message: it may echo a header). */
  failed?: string;
}

/**
 * Sends one activation's spans as one OTLP/HTTP JSON request, within `EXPORT_LIMITS`.
 * Resolves whatever happens (a dead endpoint, a 500, a timeout): the caller hands it
 * to `waitUntil` and the run never waits for it nor fails by it.
 */
export async function exportSpans(
  runId: string,
  spans: readonly TraceSpan[],
  settings: OtlpSettings,
  send: typeof fetch = fetch,
  limits = EXPORT_LIMITS,
  parent?: TraceParent,
): Promise<ExportResult> {
  const batch: string[] = [];
  let bytes = 0;
  const ids = runIds(runId, spans, parent);
  for (const span of spans) {
    if (batch.length >= limits.maxSpans) break;
    const json = spanJson(ids, span);
    const size = utf8Bytes(json) + 1;
    if (bytes + size > limits.maxBytes) break;
    batch.push(json);
    bytes += size;
  }
  const result: ExportResult = { sent: 0, dropped: spans.length - batch.length, bytes: 0 };
  if (batch.length === 0) return result;
  const body = exportRequest(settings.serviceName, batch);
  result.bytes = utf8Bytes(body);
  try {
    const res = await send(settings.url, {
      method: "POST",
      headers: { ...settings.headers, "content-type": "application/json" },
      body,
      // A collector is one origin: a redirect (to anywhere) is a failure, so its headers never travel on.
      redirect: "manual",
      signal: AbortSignal.timeout(limits.timeoutMs),
    });
    await res.body?.cancel();
    if (res.ok) result.sent = batch.length;
    else result.failed = `HTTP ${res.status}`;
  } catch (err) {
    result.failed = err instanceof Error ? err.name : "error";
  }
  return result;
}
