/**
 * Errors by HTTP status, as openai-node has them: check with `instanceof`, never
 * by message. `status`, `body` and `headers` are the response's (none for
 * `ConnectionError` and `TimeoutError`, which got no response).
 */
export class EdgeworkError extends Error {
  override readonly name: string = "EdgeworkError";
  readonly status: number | undefined;
  /** The parsed JSON error body (`{error, …}`), or its text when it was not JSON. */
  readonly body: unknown;
  readonly headers: Headers | undefined;

  constructor(message: string, init: { status?: number; body?: unknown; headers?: Headers; cause?: unknown } = {}) {
    super(message, { cause: init.cause });
    this.status = init.status;
    this.body = init.body;
    this.headers = init.headers;
  }
}

export class BadRequestError extends EdgeworkError {
  override readonly name = "BadRequestError";
}
export class AuthenticationError extends EdgeworkError {
  override readonly name = "AuthenticationError";
}
export class PermissionDeniedError extends EdgeworkError {
  override readonly name = "PermissionDeniedError";
}
export class NotFoundError extends EdgeworkError {
  override readonly name = "NotFoundError";
}
export class ConflictError extends EdgeworkError {
  override readonly name = "ConflictError";
}
export class GoneError extends EdgeworkError {
  override readonly name = "GoneError";
}
export class PayloadTooLargeError extends EdgeworkError {
  override readonly name = "PayloadTooLargeError";
}
/** 422: the request is well formed but cannot be done (an Idempotency-Key reused with another body). */
export class UnprocessableEntityError extends EdgeworkError {
  override readonly name = "UnprocessableEntityError";
}
export class RateLimitError extends EdgeworkError {
  override readonly name = "RateLimitError";
}
export class InternalServerError extends EdgeworkError {
  override readonly name = "InternalServerError";
}
/** No response: the network failed, or the stream broke off. */
export class ConnectionError extends EdgeworkError {
  override readonly name: string = "ConnectionError";
}
/** No response (or no wanted status) in time. */
export class TimeoutError extends ConnectionError {
  override readonly name = "TimeoutError";
}

const BY_STATUS: Record<number, typeof EdgeworkError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  410: GoneError,
  413: PayloadTooLargeError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

/** How much of an error body is read: the server's are small; a proxy's page need not be read whole. */
const MAX_ERROR_BODY_CHARS = 64 * 1024;
const MAX_MESSAGE_CHARS = 1000;

/** The error class of a status (≥ 500: InternalServerError; other 4xx: the base class). */
export function errorClassFor(status: number): typeof EdgeworkError {
  return BY_STATUS[status] ?? (status >= 500 ? InternalServerError : EdgeworkError);
}

/** An error response as its class, the message from the JSON body's `error` (and `issues` of a 400). */
export async function errorFromResponse(res: Response, what: string): Promise<EdgeworkError> {
  const text = (await res.text().catch(() => "")).slice(0, MAX_ERROR_BODY_CHARS);
  const body = parseJson(text);
  const reason = messageOf(body) ?? (res.statusText || "no error message");
  const message = `${what} → ${res.status}: ${reason}`.slice(0, MAX_MESSAGE_CHARS);
  return new (errorClassFor(res.status))(message, { status: res.status, body, headers: res.headers });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** `{error: "…", issues: [{path, message}]}` → "… (path: message; …)". */
function messageOf(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const { error, issues } = body as { error?: unknown; issues?: unknown };
  if (typeof error !== "string") return undefined;
  if (!Array.isArray(issues) || !issues.length) return error;
  const listed = issues.map((i: { path?: unknown; message?: unknown }) => `${String(i?.path)}: ${String(i?.message)}`);
  return `${error} (${listed.join("; ")})`;
}
