import { jsonSchema, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as z3 from "zod/v3";
import { ClaudeCodeError, InvalidInputError, ToolDefinitionError } from "../../src/errors/index.js";
import { fromAiSdkTools } from "../../src/mcp/ai-sdk-tools.js";
import {
  defineKtxTool,
  KTX_MCP_SERVER_NAME,
  ktxToolId,
  normalizeToolOutput,
  prepareToolSet,
  type KtxRuntimeToolDescriptor,
} from "../../src/mcp/tools.js";

const echo = defineKtxTool({
  name: "echo",
  description: "Echo the text back.",
  inputSchema: z.object({ text: z.string(), times: z.number().int().default(1) }),
  execute: ({ text, times }) => text.repeat(times),
});

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a throw");
}

describe("ktxToolId", () => {
  it("prefixes with the ktx server name", () => {
    expect(KTX_MCP_SERVER_NAME).toBe("ktx");
    expect(ktxToolId("search_docs")).toBe("mcp__ktx__search_docs");
  });
});

describe("normalizeToolOutput", () => {
  it("passes a { markdown, structured } envelope through", () => {
    expect(normalizeToolOutput({ markdown: "# hi", structured: { n: 1 } })).toEqual({ markdown: "# hi", structured: { n: 1 } });
    expect(normalizeToolOutput({ markdown: "# hi" })).toEqual({ markdown: "# hi" });
  });

  it("treats a string as markdown and undefined as empty", () => {
    expect(normalizeToolOutput("plain **md**")).toEqual({ markdown: "plain **md**" });
    expect(normalizeToolOutput("")).toEqual({ markdown: "" });
    expect(normalizeToolOutput(undefined)).toEqual({ markdown: "" });
  });

  it("renders other values as a fenced pretty JSON block and keeps them as structured", () => {
    const value = { rows: [1, 2], ok: true };
    expect(normalizeToolOutput(value)).toEqual({ markdown: "```json\n" + JSON.stringify(value, null, 2) + "\n```", structured: value });
    expect(normalizeToolOutput(42)).toEqual({ markdown: "```json\n42\n```", structured: 42 });
    expect(normalizeToolOutput(null)).toEqual({ markdown: "```json\nnull\n```", structured: null });
  });

  it("treats an object with a markdown field plus other keys as data", () => {
    const value = { markdown: "x", author: "y" };
    expect(normalizeToolOutput(value).structured).toBe(value);
    expect(normalizeToolOutput(value).markdown.startsWith("```json\n")).toBe(true);
  });

  it("lengthens the fence when the data contains backtick runs", () => {
    const { markdown } = normalizeToolOutput({ code: "````js\nx\n````" });
    expect(markdown.startsWith("`````json\n")).toBe(true);
    expect(markdown.endsWith("\n`````")).toBe(true);
  });

  it("throws a readable InvalidInputError for values JSON cannot serialise", () => {
    const big = thrown(() => normalizeToolOutput({ n: 10n }));
    expect(big).toBeInstanceOf(InvalidInputError);
    expect(big.message).toMatch(/cannot be serialised to JSON.*BigInt/);

    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(thrown(() => normalizeToolOutput(cyclic)).message).toMatch(/cannot be serialised to JSON.*circular/i);

    expect(thrown(() => normalizeToolOutput(() => 1)).message).toMatch(/function cannot be serialised/);
  });
});

describe("prepareToolSet", () => {
  it("converts an array of descriptors, with input-side JSON Schema", () => {
    const [prepared] = prepareToolSet([echo]);
    expect(prepared).toBeDefined();
    expect(prepared!.name).toBe("echo");
    expect(prepared!.description).toBe("Echo the text back.");
    expect(prepared!.inputJsonSchema).toEqual({
      type: "object",
      properties: {
        text: { type: "string" },
        times: { type: "integer", default: 1, minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
      },
      required: ["text"],
    });
    expect(prepared!.inputJsonSchema).not.toHaveProperty("$schema");
  });

  it("takes names from the keys of a record and keeps order", () => {
    const { name: _unused, ...rest } = echo;
    const prepared = prepareToolSet({ b_tool: rest, a_tool: { ...rest, name: "a_tool" } });
    expect(prepared.map((t) => t.name)).toEqual(["b_tool", "a_tool"]);
  });

  it("rejects a record entry whose name differs from its key", () => {
    const error = thrown(() => prepareToolSet({ first: { ...echo, name: "second" } }));
    expect(error).toBeInstanceOf(ToolDefinitionError);
    expect(error.message).toContain('"first"');
  });

  it("rejects a non-object input schema, naming the tool", () => {
    const bad: KtxRuntimeToolDescriptor = { name: "lookup", description: "d", inputSchema: z.string(), execute: () => "" };
    const error = thrown(() => prepareToolSet([bad]));
    expect(error).toBeInstanceOf(ToolDefinitionError);
    expect(ClaudeCodeError.isInstance(error)).toBe(true);
    expect((error as ToolDefinitionError).code).toBe("invalid_tool");
    expect(error.message).toContain('Tool "lookup"');
    expect(error.message).toContain("z.object");
    expect(error.message).toContain("string");
  });

  it("rejects a schema JSON Schema cannot represent, naming the tool", () => {
    const bad: KtxRuntimeToolDescriptor = { name: "when", description: "d", inputSchema: z.object({ at: z.date() }), execute: () => "" };
    const error = thrown(() => prepareToolSet([bad]));
    expect(error).toBeInstanceOf(ToolDefinitionError);
    expect(error.message).toMatch(/Tool "when" inputSchema cannot be converted to JSON Schema: Date cannot be represented/);
  });

  it("rejects zod v3 and non-zod schemas", () => {
    const v3 = { name: "old", description: "d", inputSchema: z3.object({ a: z3.string() }), execute: () => "" } as unknown as KtxRuntimeToolDescriptor;
    expect(thrown(() => prepareToolSet([v3])).message).toMatch(/Tool "old".*zod v3/);
    const plain = { name: "plain", description: "d", inputSchema: { type: "object" }, execute: () => "" } as unknown as KtxRuntimeToolDescriptor;
    expect(thrown(() => prepareToolSet([plain])).message).toMatch(/Tool "plain" inputSchema must be a zod v4 schema/);
  });

  it("rejects invalid names, duplicates and missing execute", () => {
    expect(thrown(() => prepareToolSet([{ ...echo, name: "has space" }])).message).toMatch(/invalid name "has space"/);
    expect(thrown(() => prepareToolSet([{ ...echo, name: "x".repeat(65) }])).message).toMatch(/invalid name/);
    expect(thrown(() => prepareToolSet([echo, echo])).message).toMatch(/Tool "echo" is defined more than once/);
    const noExecute = { name: "idle", description: "d", inputSchema: z.object({}) } as unknown as KtxRuntimeToolDescriptor;
    expect(thrown(() => prepareToolSet([noExecute])).message).toMatch(/Tool "idle" has no execute/);
    expect(thrown(() => prepareToolSet(42 as never))).toBeInstanceOf(ToolDefinitionError);
  });

  it("accepts refined objects and object pipes", () => {
    const refined: KtxRuntimeToolDescriptor = {
      name: "refined",
      description: "d",
      inputSchema: z.object({ a: z.number(), b: z.number() }).refine((v) => v.a < v.b),
      execute: () => "",
    };
    expect(prepareToolSet([refined])[0]!.inputJsonSchema.type).toBe("object");
  });
});

describe("fromAiSdkTools", () => {
  it("wraps execute, passing toolCallId, messages and the abort signal", async () => {
    let seen: { toolCallId: string; messages: unknown[]; abortSignal?: AbortSignal } | undefined;
    const [descriptor] = fromAiSdkTools({
      weather: tool({
        description: "Weather for a city.",
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }, options) => {
          seen = options;
          return { city, tempC: 21 };
        },
      }),
    });
    expect(descriptor!.name).toBe("weather");
    expect(descriptor!.description).toBe("Weather for a city.");
    const signal = new AbortController().signal;
    const output = await descriptor!.execute({ city: "Oslo" }, { signal, toolUseId: "toolu_1" });
    expect(output).toEqual({ city: "Oslo", tempC: 21 });
    expect(seen).toEqual({ toolCallId: "toolu_1", messages: [], abortSignal: signal });

    const [prepared] = prepareToolSet(fromAiSdkTools({ weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async () => 1 }) }));
    expect(prepared!.inputJsonSchema).toEqual({ type: "object", properties: { city: { type: "string" } }, required: ["city"] });
  });

  it("uses the last value of a streaming (async iterable) execute", async () => {
    const [descriptor] = fromAiSdkTools({
      progress: tool({
        inputSchema: z.object({}),
        async *execute() {
          yield "working";
          yield "done";
        },
      }),
    });
    expect(await descriptor!.execute({}, { signal: new AbortController().signal })).toBe("done");
  });

  it("honours toModelOutput, and error outputs throw", async () => {
    const [text, failing] = fromAiSdkTools({
      text: tool({
        inputSchema: z.object({}),
        execute: async () => ({ n: 3 }),
        toModelOutput: ({ output }) => ({ type: "text", value: `n is ${output.n}` }),
      }),
      failing: tool({
        inputSchema: z.object({}),
        execute: async () => "x",
        toModelOutput: () => ({ type: "error-text", value: "quota exhausted" }),
      }),
    });
    const signal = new AbortController().signal;
    expect(await text!.execute({}, { signal })).toEqual({ markdown: "n is 3", structured: { n: 3 } });
    await expect(failing!.execute({}, { signal })).rejects.toThrow("quota exhausted");
  });

  it("rejects a tool without execute, naming it", () => {
    const error = thrown(() => fromAiSdkTools({ clientSide: tool({ inputSchema: z.object({}), outputSchema: z.string() }) }));
    expect(error).toBeInstanceOf(ToolDefinitionError);
    expect(error.message).toContain('Tool "clientSide" has no execute');
  });

  it("rejects a non-zod input schema, naming the tool", () => {
    const error = thrown(() =>
      fromAiSdkTools({ raw: tool({ inputSchema: jsonSchema<{ q: string }>({ type: "object", properties: { q: { type: "string" } } }), execute: async () => 1 }) }),
    );
    expect(error).toBeInstanceOf(ToolDefinitionError);
    expect(error.message).toContain('Tool "raw" inputSchema must be a zod v4 schema');
  });

  it("rejects needsApproval", () => {
    expect(thrown(() => fromAiSdkTools({ risky: tool({ inputSchema: z.object({}), needsApproval: true, execute: async () => 1 }) })).message).toContain(
      'Tool "risky" sets needsApproval',
    );
  });
});
