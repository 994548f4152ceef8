/**
 * `capabilities.webSearch` (issue 43): the CLI's WebSearch tool, which runs the API's server-side web search.
 * What CLI 2.1.330 does, measured with the scripted API (docs/guides/capabilities.md, "Web search"):
 * - the model's requests list the CLI's own `WebSearch` tool (a client tool: `query`, `allowed_domains`, …);
 * - a WebSearch call makes the CLI send a request of its own to the same Messages endpoint: its own system text
 *   ("You run a web search for another Claude model …"), one user message "Perform a web search for the query:
 *   <query>", the server tool `web_search_20250305` (`name: "web_search"`) and a `tool_choice`; the API answers
 *   with `server_tool_use` and `web_search_tool_result` blocks and text, which the CLI hands back as WebSearch's result;
 * - the CLI itself contacts no other host for it (the search runs on the API's side).
 */
import { z } from "zod";

export const WEB_SEARCH_TOOL = "WebSearch";

/** `true` opts in; `false` and absent are the default, off. */
export const webSearchCapabilitySchema = z.boolean();
