import { files, http, mcp, toolsetRegistry, wait, workerCreation } from "../engine";
import { counter } from "./counter";

/**
 * The toolset kinds this app knows. To add your own kind, define it with
 * `defineToolset` (see docs/guide.md, "Write a toolset kind") and list it here.
 */
export const kinds = toolsetRegistry(files, http, mcp, workerCreation, wait, counter);
