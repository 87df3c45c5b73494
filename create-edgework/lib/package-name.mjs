// Whether a folder's name can be the new project's npm package name (the rules npm
// applies to a new package), as one reason a person can act on, or null when it can.
import { builtinModules } from "node:module";

const MAX_LENGTH = 214;
const RESERVED = new Set(["node_modules", "favicon.ico"]);

/** @param {string} name @returns {string | null} why `name` cannot be a package name */
export function packageNameProblem(name) {
  if (name.length === 0) return "it is empty";
  if (name.length > MAX_LENGTH) return `it is longer than ${MAX_LENGTH} characters`;
  if (name.trim() !== name) return "it starts or ends with a space";
  if (name.startsWith(".") || name.startsWith("_")) return 'it starts with "." or "_"';
  if (name !== name.toLowerCase()) return "it has capital letters";
  if (RESERVED.has(name)) return "it is reserved by npm";
  if (builtinModules.includes(name)) return "it is the name of a Node.js core module";
  if (/[~'!()*]/.test(name) || encodeURIComponent(name) !== name) return "it has characters a URL would escape (use a-z, 0-9, - . _)";
  return null;
}
