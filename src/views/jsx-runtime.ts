import { type HtmlEscapedString, raw } from "hono/utils/html";

/**
 * The JSX runtime of the pages and emails (tsconfig.json's jsxImportSource maps
 * `edgework-jsx` here): an element renders at once to escaped HTML, as hono/jsx renders
 * one on the server, without what hono/jsx carries for the browser and for React's
 * ways (contexts, hooks, streaming, hoisted <head> tags: 4 KiB gzip of the Worker).
 * Every text and attribute value is escaped; only `dangerouslySetInnerHTML` is not.
 * Its types are hono/jsx's: a view is written as before.
 */
export type { JSX } from "hono/jsx/jsx-runtime";

type Props = { children?: unknown; [name: string]: unknown };

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escaped = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
/** Elements with no content, written `<br/>`. */
const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param", "source", "track", "wbr"]);
/** Attributes written `name=""` when true and left out when false (hono's list); any other boolean is written "true" or "false". */
const BOOLEAN = new Set(
  "allowfullscreen async autofocus autoplay checked controls default defer disabled download formnovalidate hidden inert ismap itemscope loop multiple muted nomodule novalidate open playsinline readonly required reversed selected".split(
    " ",
  ),
);
const RENAMED: Record<string, string> = { className: "class", htmlFor: "for" };
const NAME = /^[a-zA-Z_:][\w.:-]*$/;

const isHtml = (v: unknown): v is HtmlEscapedString => v instanceof String && (v as { isEscaped?: boolean }).isEscaped === true;

/** A child as HTML: text escaped, rendered elements as they are, nothing for null, undefined and booleans. */
function content(child: unknown): string {
  if (child == null || typeof child === "boolean") return "";
  if (Array.isArray(child)) return child.map(content).join("");
  if (isHtml(child)) return child.toString();
  if (typeof child === "string" || typeof child === "number") return escaped(String(child));
  throw new TypeError(`a JSX child is text, a number or an element, not ${Object.prototype.toString.call(child)}`);
}

function attribute(key: string, value: unknown, tag: string): string {
  if (value == null || key === "ref") return "";
  const name = RENAMED[key] ?? key;
  if (!NAME.test(name)) throw new TypeError(`<${tag}>: invalid attribute name ${JSON.stringify(name)}`);
  if (typeof value === "boolean" && BOOLEAN.has(name)) return value ? ` ${name}=""` : "";
  if (typeof value === "string") return ` ${name}="${escaped(value)}"`;
  if (typeof value === "number" || typeof value === "boolean" || isHtml(value)) return ` ${name}="${value}"`;
  throw new TypeError(`<${tag}>: attribute ${name} is a string, a number or a boolean, not ${Object.prototype.toString.call(value)}`);
}

export function jsx(tag: string | ((props: Props) => unknown), props: Props): HtmlEscapedString {
  if (typeof tag === "function") return raw(content(tag(props)));
  let open = `<${tag}`;
  let inner = content(props.children);
  for (const key in props) {
    if (key === "children") continue;
    if (key === "dangerouslySetInnerHTML") inner = String((props[key] as { __html: unknown }).__html);
    else open += attribute(key, props[key], tag);
  }
  return raw(VOID.has(tag) && !inner ? `${open}/>` : `${open}>${inner}</${tag}>`);
}

export const Fragment = (props: Props): HtmlEscapedString => raw(content(props.children));

export { jsx as jsxs, jsx as jsxDEV };
