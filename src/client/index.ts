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
  UnprocessableEntityError,
} from "./errors";
export type { RunEvent, RunEventType } from "./event-types";
export type { RunEventsOptions } from "./run-events";
export type { Approvals } from "./approvals";
export type { Runs, WaitOptions } from "./runs";
export type { Workers } from "./workers";
export type { Operations } from "./operations";
export type { Schedules } from "./schedules";
export type * from "./operation-types";
export type * from "./schedule-types";
export type { Fetch, RequestOptions } from "./transport";
export { TERMINAL_STATUSES } from "./types";
export type * from "./types";
