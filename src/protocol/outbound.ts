/** Builders for the lines we write to the CLI's stdin. */

export interface InitializeRequest {
  subtype: "initialize";
  systemPrompt: string[];
  jsonSchema?: Record<string, unknown>;
  sdkMcpServers?: string[];
  skills: string[];
  hooks: null;
}

export function controlRequest(requestId: string, request: object) {
  return { type: "control_request", request_id: requestId, request };
}

export function initializeRequest(options: {
  systemPrompt: string;
  jsonSchema?: Record<string, unknown>;
  mcpServers: string[];
}): InitializeRequest {
  return {
    subtype: "initialize",
    systemPrompt: [options.systemPrompt],
    ...(options.jsonSchema ? { jsonSchema: options.jsonSchema } : {}),
    ...(options.mcpServers.length > 0 ? { sdkMcpServers: options.mcpServers } : {}),
    skills: [],
    hooks: null,
  };
}

export function userMessage(text: string) {
  return {
    type: "user",
    session_id: "",
    message: { role: "user", content: [{ type: "text", text }] },
    parent_tool_use_id: null,
  };
}

export function controlSuccess(requestId: string, response: unknown) {
  return { type: "control_response", response: { subtype: "success", request_id: requestId, response } };
}

/**
 * `JSON.stringify(controlSuccess(requestId, { mcp_response }))`, built as text: the reply to every tool call,
 * without the wrapper objects (a share of a reused loop's allocation, docs/performance.md). Same bytes.
 */
export function mcpSuccessLine(requestId: string, mcpResponse: unknown): string {
  const json = JSON.stringify(mcpResponse);
  const body = json === undefined ? "{}" : `{"mcp_response":${json}}`;
  return `{"type":"control_response","response":{"subtype":"success","request_id":${JSON.stringify(requestId)},"response":${body}}}`;
}

export function controlError(requestId: string, error: string) {
  return { type: "control_response", response: { subtype: "error", request_id: requestId, error } };
}
