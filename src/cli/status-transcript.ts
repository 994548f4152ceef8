/**
 * What `status` and `doctor` read back from the probe call's transcript: the login named in the
 * initialize reply, and the isolation surface of `system/init`.
 */
import type { CallLogin } from "../runtime/types.js";
import { callLogin } from "../claude-code/checks/billing.js";
import { loadTranscript } from "../transcripts/reader.js";

export interface IsolationSurface {
  tools: string[];
  mcpServers: Array<{ name: string; status?: string }>;
  plugins: string[];
  apiKeySource: string | null;
  /** Names the CLI found on the host; reported, never callable in a KTX run. */
  hostDiscovered: { slashCommands: string[]; skills: string[]; agents: string[] };
}

export /** The login from the `account` of the initialize reply in a transcript (also when the run then failed). */
function loginFrom(transcriptPath: string | undefined): CallLogin | null {
  if (!transcriptPath) return null;
  try {
    for (const record of loadTranscript(transcriptPath).records) {
      if (record.kind !== "in") continue;
      const text = String((record as { text?: unknown }).text);
      if (!text.includes('"account"')) continue;
      const message = JSON.parse(text) as { type?: string; response?: { response?: { account?: Record<string, unknown> } } };
      const account = message.type === "control_response" ? message.response?.response?.account : undefined;
      if (account) return callLogin(account);
    }
  } catch {
    // An unreadable transcript: the login stays unknown.
  }
  return null;
}

/** The isolation surface from the `system/init` line of a transcript. */
export function surfaceFrom(transcriptPath: string | undefined): IsolationSurface | null {
  if (!transcriptPath) return null;
  let records;
  try {
    records = loadTranscript(transcriptPath).records;
  } catch {
    return null;
  }
  for (const record of records) {
    if (record.kind !== "in" && record.kind !== "out") continue;
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(String((record as { text?: unknown }).text));
    } catch {
      continue;
    }
    if (message?.type !== "system" || message.subtype !== "init") continue;
    const names = (values: unknown) =>
      (Array.isArray(values) ? values : []).map((value) => (typeof value === "string" ? value : String((value as { name?: unknown })?.name ?? "")));
    return {
      tools: names(message.tools),
      mcpServers: (Array.isArray(message.mcp_servers) ? message.mcp_servers : []).map((server: { name?: unknown; status?: unknown }) => ({
        name: String(server?.name ?? ""),
        ...(typeof server?.status === "string" ? { status: server.status } : {}),
      })),
      plugins: names(message.plugins),
      apiKeySource: typeof message.apiKeySource === "string" ? message.apiKeySource : null,
      hostDiscovered: { slashCommands: names(message.slash_commands), skills: names(message.skills), agents: names(message.agents) },
    };
  }
  return null;
}

/**
 * What the runtime's interceptor saw of the probe call (the call record, docs/transcript-format.md): null when
 * the call had no interceptor (an apiEndpoint, `wire: false`) or no call record; else what it refused.
 */
export function egressFrom(transcriptPath: string | undefined): { requests: number; refused: string[] } | null {
  if (!transcriptPath) return null;
  try {
    for (const record of loadTranscript(transcriptPath).records) {
      if (record.kind !== "call") continue;
      const { requests, refused } = record as { requests?: unknown; refused?: unknown };
      if (!Array.isArray(requests)) return null;
      return { requests: requests.length, refused: Array.isArray(refused) ? refused.map(String) : [] };
    }
  } catch {
    // An unreadable transcript: nothing to show.
  }
  return null;
}
