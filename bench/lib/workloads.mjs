/**
 * The three measured calls — one-turn text, a structured object, a 5-tool agent loop — and the
 * scripted model that answers them. The model's answer is chosen from the request itself (which
 * tools it offers, how many tool results it carries), so every variant and every concurrent run
 * can share one stateless API.
 */
import { z } from "zod";

export const MODEL = "sonnet";
export const SYSTEM = "You are the KTX benchmark assistant.";

export const TEXT_PROMPT = "Is this page about billing? Answer in one sentence.";
export const TEXT_REPLY = "No, the page is about shipping times, not billing.";

export const OBJECT_PROMPT = "Describe the orders table.";
export const objectSchema = z.object({ title: z.string(), columns: z.array(z.string()), rows: z.number() });
export const OBJECT_VALUE = { title: "Orders", columns: ["id", "customer_id", "total"], rows: 1204 };

export const LOOP_PROMPT = "Walk the five curation steps, one tool each, then summarise.";
export const LOOP_STEPS = 5;
export const LOOP_BUDGET = 8;
export const LOOP_REPLY = "Curated: all five steps done.";
export const loopToolName = (index) => `step_${index}`;
export const loopToolText = (name, args) => `${name} done for ${args?.item ?? "?"}`;

/** Five trivial KTX tools (the runtime's descriptor shape). */
export const loopTools = Array.from({ length: LOOP_STEPS }, (_, i) => ({
  name: loopToolName(i + 1),
  description: `Curation step ${i + 1}`,
  inputSchema: z.object({ item: z.string() }),
  execute: ({ item }) => loopToolText(loopToolName(i + 1), { item }),
}));

export const WORKLOADS = ["text", "object", "loop"];

function toolResultCount(messages) {
  let count = 0;
  for (const message of messages ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) if (block.type === "tool_result") count += 1;
  }
  return count;
}

/** The scripted model: a ScriptedTurn for one Messages request body. */
export function scriptedTurn(body) {
  const tools = (body?.tools ?? []).map((tool) => tool.name);
  if (tools.includes("StructuredOutput")) {
    return { toolCalls: [{ name: "StructuredOutput", input: OBJECT_VALUE }] };
  }
  if (tools.some((name) => name.startsWith("mcp__ktx__step_"))) {
    const done = toolResultCount(body.messages);
    if (done < LOOP_STEPS) return { toolCalls: [{ name: `mcp__ktx__${loopToolName(done + 1)}`, input: { item: `candidate-${done + 1}` } }] };
    return { text: LOOP_REPLY };
  }
  return { text: TEXT_REPLY };
}
