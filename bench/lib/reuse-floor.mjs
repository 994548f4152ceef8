/**
 * The floor for reuse: one bare CLI with the runtime's exact flags, driven by the least code that can
 * serve many calls on it. `initialize` once; per call a user line with a fresh uuid, canned MCP replies,
 * the clock stops at `result`, then `rewind_conversation` to that uuid (the next call waits for its reply).
 */
import { spawn } from "node:child_process";
import { readMessages } from "./common.mjs";
import { randomUUID } from "node:crypto";

/**
 * @param {{ cliPath: string, args: string[], env: Record<string,string>, cwd: string, initialize: object,
 *   tools?: {name:string, description:string, inputJsonSchema:object}[], toolText?: (name: string, args: unknown) => string }} spec
 */
export function startReuseFloor(spec) {
  const child = spawn(spec.cliPath, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ["pipe", "pipe", "pipe"] });
  const toolsList = JSON.stringify({ tools: (spec.tools ?? []).map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputJsonSchema })) });
  const waiting = new Map(); // request_id -> resolve, for our control requests
  let onResult;
  let counter = 0;
  const send = (line) => child.stdin.write(`${line}\n`);
  const reply = (id, response) => send(`{"type":"control_response","response":{"subtype":"success","request_id":${JSON.stringify(id)},"response":${response}}}`);
  const request = (body) => {
    const id = `rf_${++counter}`;
    send(JSON.stringify({ type: "control_request", request_id: id, request: body }));
    return new Promise((resolve) => waiting.set(id, resolve));
  };

  const onMessage = (message) => {
    if (message.type === "control_response") {
      waiting.get(message.response.request_id)?.(message.response.response);
      waiting.delete(message.response.request_id);
    } else if (message.type === "control_request") {
      const { request_id: id, request: req } = message;
      if (req.subtype === "mcp_message") {
        const rpc = req.message;
        let out;
        if (rpc.method === "initialize") {
          out = `{"jsonrpc":"2.0","id":${JSON.stringify(rpc.id)},"result":{"protocolVersion":${JSON.stringify(rpc.params?.protocolVersion ?? "2025-06-18")},"capabilities":{"tools":{}},"serverInfo":{"name":"ktx","version":"1.0.0"}}}`;
        } else if (rpc.method === "tools/list") {
          out = `{"jsonrpc":"2.0","id":${JSON.stringify(rpc.id)},"result":${toolsList}}`;
        } else if (rpc.method === "tools/call") {
          const text = spec.toolText ? spec.toolText(rpc.params.name, rpc.params.arguments) : "ok";
          out = `{"jsonrpc":"2.0","id":${JSON.stringify(rpc.id)},"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}]}}`;
        } else {
          out = `{"jsonrpc":"2.0","result":{},"id":0}`;
        }
        reply(id, `{"mcp_response":${out}}`);
      } else if (req.subtype === "can_use_tool") {
        reply(id, `{"behavior":"deny","message":"not available"}`);
      } else {
        send(JSON.stringify({ type: "control_response", response: { subtype: "error", request_id: id, error: "unsupported" } }));
      }
    } else if (message.type === "result") {
      onResult?.(message);
    }
  };
  readMessages(child.stdout, onMessage);
  child.stderr.resume();
  child.stdin.on("error", () => undefined);
  const initialized = request(spec.initialize);
  const exited = new Promise((resolve) => child.on("close", resolve));

  return {
    pid: child.pid,
    /** One call: resolves with `{ ms, result }` at the result; the rewind is done before it resolves `settled`. */
    async call(prompt) {
      await initialized;
      const started = performance.now();
      const uuid = randomUUID();
      const result = await new Promise((resolve) => {
        onResult = resolve;
        send(JSON.stringify({ type: "user", uuid, session_id: "", message: { role: "user", content: [{ type: "text", text: prompt }] }, parent_tool_use_id: null }));
      });
      const ms = performance.now() - started;
      const rewound = await request({ subtype: "rewind_conversation", target_message_uuid: uuid });
      if (rewound?.rewound !== true) throw new Error(`reuse floor: rewind failed ${JSON.stringify(rewound)}`);
      return { ms, result };
    },
    async close() {
      child.stdin.end();
      await exited;
    },
  };
}
