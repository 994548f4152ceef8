/**
 * The CLI's own tools a call's capabilities add (capabilities.ts, capabilities-bash.ts, capabilities-web-search.ts):
 * what the launch lists in `--tools` and the init and wire checks expect, besides the call's own tools.
 */
import type { BashLaunch } from "./capabilities-bash.js";

export interface CapabilityToolsSpec {
  /** The file tools opted into (`capabilities.builtinTools`, resolved for the version). */
  builtinTools?: readonly string[];
  /** `capabilities.bash`, resolved. */
  bash?: BashLaunch;
  /** `capabilities.webSearch`. */
  webSearch?: boolean;
}

/** The built-in tools of a call, sorted: the file tools, Bash with `bash`, WebSearch with `webSearch`. */
export function capabilityTools(spec: CapabilityToolsSpec): readonly string[] | undefined {
  if (!spec.bash && !spec.webSearch) return spec.builtinTools;
  return [...(spec.builtinTools ?? []), ...(spec.bash ? ["Bash"] : []), ...(spec.webSearch ? ["WebSearch"] : [])].sort();
}
