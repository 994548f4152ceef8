/**
 * The MCP side of a reused process: one bridge per process (the CLI lists the tools once, at
 * `initialize`), whose tools forward to the handlers of the call currently running. Calls sharing a
 * process have equal tool *definitions* (they are in the pool key); their handlers may differ.
 */
import { z } from "zod";
import { type KtxMcpBridge, type KtxToolCallEvent, createKtxMcpBridge } from "../../mcp/bridge.js";
import type { PreparedTool } from "../../mcp/tools.js";
import type { Logger } from "../../session/logger.js";

interface Binding {
  /** The call's own tools (a handful; found by name without a Map per call). */
  tools: readonly PreparedTool[];
  onToolCall?(event: KtxToolCallEvent): void;
}

export class ToolSwitch {
  readonly bridge: KtxMcpBridge | undefined;
  private current: Binding | undefined;

  constructor(definitions: readonly PreparedTool[], toolTimeoutMs: number | undefined, logger: Logger) {
    const forward = (definition: PreparedTool): PreparedTool => ({
      name: definition.name,
      description: definition.description,
      inputJsonSchema: definition.inputJsonSchema,
      // Arguments are checked against the running call's own schema (same JSON schema, its own refinements).
      inputSchema: z.unknown(),
      execute: (input, context) => {
        const binding = this.current;
        const tool = binding && toolNamed(binding.tools, definition.name);
        if (!binding || !tool) throw new Error(`Tool ${definition.name} is not available: no call is running on this process.`);
        const parsed = z.safeParse(tool.inputSchema, input ?? {});
        if (!parsed.success) throw new Error(`Invalid arguments for tool ${tool.name}: ${z.prettifyError(parsed.error)}`);
        return tool.execute(parsed.data, context);
      },
    });
    this.bridge =
      definitions.length === 0
        ? undefined
        : createKtxMcpBridge(definitions.map(forward), {
            toolTimeoutMs,
            onToolCall: (event) => this.current?.onToolCall?.(event),
            logger: { debug: (message) => logger.debug(message), warn: (message) => logger.warn(message) },
          });
  }

  /**
   * Routes tool calls to this call's handlers; the returned function ends the binding and aborts its in-flight
   * handlers. A process serves one call at a time, so the handlers running on its bridge at the end are this
   * call's (one abort per call, rather than a signal joined per tool call).
   */
  bind(tools: readonly PreparedTool[], onToolCall?: (event: KtxToolCallEvent) => void): () => void {
    const binding: Binding = { tools, onToolCall };
    this.current = binding;
    return () => {
      if (this.current !== binding) return;
      this.current = undefined;
      this.bridge?.abortRunning(() => new Error("the call ended"));
    };
  }

  async close(): Promise<void> {
    await this.bridge?.close();
  }
}

function toolNamed(tools: readonly PreparedTool[], name: string): PreparedTool | undefined {
  for (let i = 0; i < tools.length; i += 1) if (tools[i]!.name === name) return tools[i];
  return undefined;
}
