/**
 * Writes a synthetic CLI stdout stream of `bytes` bytes (default 100 MiB) of ordinary stream-json
 * lines — assistant text and tool_use, user tool_result, stream_event, system status, result — to
 * stdout, honouring back-pressure. It stands in for a very long agent loop's CLI.
 *
 *   node bench/lib/stream-writer.mjs [bytes]
 */
const total = Number(process.argv[2] ?? 100 * 2 ** 20);

const words = ["orders", "customer_id", "billing", "shipping", "glossary", "term", "candidate", "schema", "naïve", "table"];
const text = (n, seed) => {
  let out = "";
  for (let i = seed; out.length < n; i += 1) out += `${words[i % words.length]} `;
  return out;
};

function line(i) {
  const id = `msg_${i}`;
  switch (i % 6) {
    case 0:
      return { type: "assistant", message: { id, type: "message", role: "assistant", model: "claude-sonnet-5-5", content: [{ type: "text", text: text(1500, i) }], stop_reason: null, usage: { input_tokens: 1200, output_tokens: 300, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } }, parent_tool_use_id: null, session_id: "bench" };
    case 1:
      return { type: "assistant", message: { id, type: "message", role: "assistant", model: "claude-sonnet-5-5", content: [{ type: "tool_use", id: `toolu_${i}`, name: "mcp__ktx__lookup", input: { term: text(40, i) } }], stop_reason: null, usage: { input_tokens: 1200, output_tokens: 40 } }, parent_tool_use_id: null, session_id: "bench" };
    case 2:
      return { type: "user", message: { role: "user", content: [{ tool_use_id: `toolu_${i - 1}`, type: "tool_result", content: [{ type: "text", text: text(4000, i) }] }] }, parent_tool_use_id: null, session_id: "bench", tool_use_result: [{ type: "text", text: text(600, i) }] };
    case 3:
      return { type: "stream_event", event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: text(120, i) } }, parent_tool_use_id: null, session_id: "bench", uuid: `u${i}` };
    case 4:
      return { type: "system", subtype: "status", status: "requesting", session_id: "bench", uuid: `u${i}` };
    default:
      return { type: "rate_limit_event", rate_limit_info: { status: "allowed" }, session_id: "bench", uuid: `u${i}` };
  }
}

// Pre-render a cycle of lines, then write it again and again (the parent must parse every copy anew).
const cycle = Buffer.from(`${Array.from({ length: 60 }, (_, i) => JSON.stringify(line(i))).join("\n")}\n`, "utf8");
let written = 0;

function pump() {
  while (written < total) {
    const last = cycle.subarray(0, Math.min(cycle.length, total - written));
    // Only whole lines: the final piece is cut at its last newline.
    const piece = last.length === cycle.length ? last : last.subarray(0, last.lastIndexOf(0x0a) + 1);
    if (piece.length === 0) break;
    written += piece.length;
    if (!process.stdout.write(piece)) return process.stdout.once("drain", pump);
  }
  const result = { type: "result", subtype: "success", is_error: false, num_turns: 1, session_id: "bench", result: "done" };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
pump();
