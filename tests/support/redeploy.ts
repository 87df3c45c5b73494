import { installDeploy, type Deploy } from "../../src/catalog";
import { files, wranglerVars } from "../../src/edgework.generated";
import { appKinds } from "../../src/engine/toolsets/app-kinds";
import { toolsets } from "../../src/toolsets/index";
import { functions } from "../fixtures/functions/index";

/**
 * Installs what the test Worker's createApp installs, but for what `change` replaces: a new
 * version of the app deployed under paused runs (another catalog, another edgework version).
 */
export function redeploy(change: Partial<Deploy> = {}): void {
  installDeploy({ files, kinds: appKinds(toolsets), functions, wranglerVars, ...change });
}
