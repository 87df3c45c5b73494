export { EdgeworkClient, type ClientOptions } from "./client";
export {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  EdgeworkError,
  GoneError,
  InternalServerError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  RateLimitError,
  TimeoutError,
} from "./errors";
export type { RunEvent, RunEventType } from "./event-types";
export type { RunEventsOptions } from "./run-events";
export type { WaitOptions } from "./runs";
export type { Fetch, RequestOptions } from "./transport";
export { TERMINAL_STATUSES } from "./types";
export type * from "./types";
