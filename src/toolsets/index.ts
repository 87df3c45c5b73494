import type { ToolsetKind } from "../engine";
import { counter } from "./counter";

/**
 * This app's own toolset kinds, beside the built-in ones: src/index.ts passes them to
 * createApp, and `edgework build` checks the catalog with them (as in a user's project).
 */
export const toolsets: Record<string, ToolsetKind> = { counter };
