import { describe, expect, it } from "vitest";
import { sendFailure } from "../../src/email/send-failure";

/**
 * Review (issue 29): send-failure.ts promises a reason that "names no address" (it goes
 * into run events, the run page and the inbox), and reads code-less messages by pattern.
 * Its address filter misses addresses as RFC 5321 writes them: a quoted local part, an
 * apostrophe (o'neil@…). Its patterns make any code-less text that mentions a
 * "destination address" or a recipient "not allowed" lasting (no retry).
 */

const reasonOf = (err: unknown) => sendFailure(err).reason;

describe("review2: a send failure's reason names no address", () => {
  it("a quoted local part and an apostrophe in an unrecognised message are not kept", () => {
    expect(reasonOf(new Error('550 5.1.1 <"john smith"@example.com>: mailbox unavailable'))).not.toMatch(/john smith|@example\.com/);
    expect(reasonOf(new Error("550 5.1.1 mailbox unavailable: ann.o'neil@example.com"))).not.toMatch(/ann\.o'|neil/);
  });
});

describe("review2: a passing failure is not made lasting by a word in its text", () => {
  it("a code-less message that only mentions a destination address or a recipient being 'not allowed' for now stays retryable", () => {
    expect(sendFailure(new Error("421 4.4.2 connection to destination address timed out, try again later"))).toMatchObject({ lasting: false });
    expect(sendFailure(new Error("452 4.2.2 recipient mailbox full, not allowed more mail for now"))).toMatchObject({ lasting: false });
  });
});
