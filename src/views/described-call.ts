import type { CallDescription } from "../engine/types/toolset";
import { prettyArgs } from "./format";

/** A call as every channel shows it (page, email, Slack): its kind's one-line summary (`POST host/path`), if any, and the body. */
export interface DescribedCall {
  summary: string | null;
  /** The kind's details (the pretty body), else the pretty arguments; cut to `max` characters. */
  body: string;
}

export const cutText = (text: string, max = 4000) => (text.length > max ? `${text.slice(0, max)}\n… (${text.length - max} more characters)` : text);

/** The one renderer of a call the approval page, the approval email and the Slack message share. */
export function describedCall(call: CallDescription | undefined, args: unknown, max = 4000): DescribedCall {
  if (!call) return { summary: null, body: prettyArgs(args, max) };
  return { summary: call.summary, body: call.details ? cutText(call.details, max) : prettyArgs(args, max) };
}

/** The same as plain text: the summary line, then the body. */
export const describedCallText = (d: DescribedCall) => (d.summary ? `${d.summary}\n${d.body}` : d.body);
