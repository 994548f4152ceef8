/**
 * Tool ids of the MCP servers the CLI runs (`capabilities.mcpServers`), apart from their schema so the
 * interceptor's process, which checks them on the wire, loads no zod (its start is on a runtime's first call).
 */

/** Whether a tool id belongs to one of `names` (`mcp__<name>__<tool>`). */
export function isServerTool(tool: string, names: readonly string[]): boolean {
  return names.some((name) => tool.startsWith(`mcp__${name}__`) && tool.length > name.length + 7);
}
