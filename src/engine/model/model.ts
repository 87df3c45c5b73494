import type { ContentPart } from "../types/model";

/** A message's text, attachments described by name (for models and logs that take text only). */
export const textOf = (content: string | ContentPart[]): string =>
  typeof content === "string" ? content : content.map((p) => (p.type === "text" ? p.text : `[attachment ${p.name} (${p.mime}, ${p.size} bytes)]`)).join("\n");

export const MODEL_NAME = /^([a-z0-9_-]+):(.+)$/;
