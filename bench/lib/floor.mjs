/**
 * The floor: the bare pinned CLI, launched with exactly the flags the runtime uses (`buildCliArgs`),
 * driven by the least code that can drive it. It writes `initialize` and the user message at once,
 * splits stdout on newlines, answers the in-process MCP server's JSON-RPC with canned replies, and
 * stops the clock at the `result` line (stdin is closed then; the exit is timed separately).
 */
import { spawn } from "node:child_process";
import { readMessages } from "./common.mjs";

/**
 * @param {object} spec
 * @param {string} spec.cliPath
 * @param {string[]} spec.args
 * @param {Record<string,string>} spec.env
 * @param {string} spec.cwd
 * @param {object} spec.initialize  the `request` of the initialize control request
 * @param {string} spec.prompt
 * @param {{name:string, description:string, inputJsonSchema:object}[]} [spec.tools]
 * @param {(name: string, args: unknown) => string} [spec.toolText]
 * @returns {Promise<{ resultMs: number, exitMs: number, result: any, exitCode: number | null }>}
 */
export function runFloor(spec) {
  const started = performance.now();
  const child = spawn(spec.cliPath, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ["pipe", "pipe", "pipe"] });
  const toolsList = JSON.stringify({ tools: (spec.tools ?? []).map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputJsonSchema })) });
  let resultMs;
  let result;
  const send = (line) => child.stdin.write(`${line}\n`);
  const reply = (id, response) => send(`{"type":"control_response","response":{"subtype":"success","request_id":${JSON.stringify(id)},"response":${response}}}`);

  const onMessage = (message) => {
    if (message.type === "control_request") {
      const { request_id: id, request } = message;
      if (request.subtype === "mcp_message") {
        const rpc = request.message;
        let out;
        if (rpc.method === "initialize") {
          out = `{"jsonrpc":"2.0","id":${JSON.stringify(rpc.id)},"result":{"protocolVersion":${JSON.stringify(rpc.params?.protocolVersion ?? "2025-06-18")},"capabilities":{"tools":{}},"serverInfo":{"name":"ktx","version":"1.0.0"}}}`;
        } else if (rpc.method === "tools/list") {
          out = `{"jsonrpc":"2.0","id":${JSON.stringify(rpc.id)},"result":${toolsList}}`;
        } else if (rpc.method === "tools/call") {
          const text = spec.toolText ? spec.toolText(rpc.params.name, rpc.params.arguments) : "ok";
          out = `{"jsonrpc":"2.0","id":${JSON.stringify(rpc.id)},"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}]}}`;
        } else {
          out = `{"jsonrpc":"2.0","result":{},"id":0}`; // notification ack
        }
        reply(id, `{"mcp_response":${out}}`);
      } else if (request.subtype === "can_use_tool") {
        reply(id, `{"behavior":"deny","message":"not available"}`);
      } else {
        send(JSON.stringify({ type: "control_response", response: { subtype: "error", request_id: id, error: "unsupported" } }));
      }
    } else if (message.type === "result" && resultMs === undefined) {
      resultMs = performance.now() - started;
      result = message;
      child.stdin.end();
    }
  };

  readMessages(child.stdout, onMessage);
  child.stderr.resume();
  child.stdin.on("error", () => undefined);
  send(JSON.stringify({ type: "control_request", request_id: "floor_init", request: spec.initialize }));
  send(JSON.stringify({ type: "user", session_id: "", message: { role: "user", content: [{ type: "text", text: spec.prompt }] }, parent_tool_use_id: null }));

  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (exitCode) => {
      const exitMs = performance.now() - started;
      if (resultMs === undefined) reject(new Error(`floor: the CLI exited (code ${exitCode}) without a result`));
      else resolve({ resultMs, exitMs, result, exitCode });
    });
  });
}
