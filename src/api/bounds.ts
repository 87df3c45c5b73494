/** The API's limits and names that the server's own modules share (the engine's checks, the pages, the email replies). */

/** A worker's (or code function's, or tool's) name. */
export const WORKER_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** The longest fork point accepted: a key is a call path, far shorter than this. */
export const MAX_FORK_KEY = 4096;
/** The longest answer to a question accepted, by page, API or reply. */
export const MAX_ANSWER_CHARS = 8000;
/** A delivery id a caller chooses (an event's, a message's): what makes two deliveries one. */
export const EVENT_ID = /^[A-Za-z0-9_.:-]{1,200}$/;
/** A completion webhook's URL, at most. */
export const MAX_NOTIFY_URL_CHARS = 2048;
