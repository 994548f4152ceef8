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

// Sessions (bench/sessions.mjs): turns of one conversation. A text turn, and a tool turn that calls three
// tools one after another. The model counts only the tool results after the turn's own prompt, since a
// session's later requests carry every earlier turn.
export const SESSION_TEXT_PROMPT = "Is this page about billing? Answer in one sentence.";
export const SESSION_TOOL_PROMPT = "Run the three session steps, one tool each, then summarise.";
export const SESSION_TOOL_STEPS = 3;
export const SESSION_TOOL_REPLY = "Session steps: all three done.";
export const sessionToolName = (index) => `session_step_${index}`;
/** Three trivial tools (the runtime's descriptor shape). */
export const sessionTools = Array.from({ length: SESSION_TOOL_STEPS }, (_, i) => ({
  name: sessionToolName(i + 1),
  description: `Session step ${i + 1}`,
  inputSchema: z.object({ item: z.string() }),
  execute: ({ item }) => loopToolText(sessionToolName(i + 1), { item }),
}));

const blockText = (message) => (typeof message.content === "string" ? message.content : (message.content ?? []).map((block) => (block.type === "text" ? block.text : "")).join(""));

/** The session model: the last user message with text decides; tool results after it count the steps done. */
function sessionTurn(messages) {
  let last = -1;
  const isPrompt = (message) => message.role === "user" && (blockText(message).includes(SESSION_TEXT_PROMPT) || blockText(message).includes(SESSION_TOOL_PROMPT));
  for (let i = 0; i < messages.length; i += 1) if (isPrompt(messages[i])) last = i;
  if (last < 0 || !blockText(messages[last]).includes(SESSION_TOOL_PROMPT)) return { text: TEXT_REPLY };
  const done = toolResultCount(messages.slice(last + 1));
  if (done < SESSION_TOOL_STEPS) return { toolCalls: [{ name: `mcp__ktx__${sessionToolName(done + 1)}`, input: { item: `turn-${done + 1}` } }] };
  return { text: SESSION_TOOL_REPLY };
}

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
  if (tools.some((name) => name.startsWith("mcp__ktx__session_step_"))) return sessionTurn(body.messages ?? []);
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
