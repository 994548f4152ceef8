/**
 * The messages between a runtime and its interceptor's process (interceptor-process.ts, the host side;
 * process-main.ts, the process). JSON over node's IPC channel; one channel, so each side sees the
 * other's messages in the order they were sent.
 */
import type { IssuedLeaves } from "./ca.js";
import type { CallExpectation } from "./check.js";
import type { WireUpstream } from "./upstream.js";
import type { RequestRecord } from "./records.js";

/** A call's expectation as it crosses: tool outputs go separately, as the call's tools return them. */
export type SentExpectation = Omit<CallExpectation, "toolOutputs">;

export type ToProcess =
  /** `issued`: the CA certificate and a leaf (key and chain) per host, made by the runtime; the CA's key never crosses. */
  /**
   * First, with the listening socket the runtime bound (node's handle passing, a raw handle: nothing accepts
   * on it until the interceptor is up, so connections wait in its backlog) and the CA file the runtime wrote:
   * its CLIs are pointed at both before the process is up. The process removes the file when it exits.
   */
  | { type: "listen"; caFile: string }
  | { type: "start"; secret: string; env: Record<string, string>; bodies: boolean; issued: IssuedLeaves; upstream?: WireUpstream }
  | { type: "version"; version: string }
  | { type: "begin"; session: string; call: number; expectation: SentExpectation }
  /** A tool's output, which the check compares each tool result with; `ack`: reply when it is in place. */
  | { type: "tool"; session: string; call: number; id: string; texts: string[]; ack: number }
  /** `reply`: answer with the call's records (without it, the call's end is only noted: the host had them all). */
  | { type: "end"; session: string; call: number; reply?: number }
  /** `capabilities.mcpServers`: the CLI-run servers' tools the call's init listed, which its requests may carry. */
  | { type: "mcpTools"; session: string; call: number; names: string[] }
  | { type: "drop"; session: string }
  /** Is the process still answering? Sent while calls run (interceptor-process.ts, HEARTBEAT_MS); answered with `acked`. */
  | { type: "ping"; reply: number };

export type FromProcess =
  | { type: "ready"; port: number; caFile: string }
  | { type: "failed"; message: string }
  /** The session was stopped: `call` is the call that ran on it, if any. */
  | { type: "stop"; session: string; call?: number; differences: string[] }
  | { type: "acked"; reply: number }
  /**
   * Pushed as they happen, so a call's end needs no round trip: the call's finished records when an
   * answer ends the model's turn (those since the last push), a refusal.
   */
  | { type: "records"; session: string; call: number; records: RequestRecord[] }
  | { type: "refused"; session: string; what: string }
  /** The whole of a call's records (refusals were all pushed before it). */
  | { type: "ended"; reply: number; forwarded: number; records: RequestRecord[] };

/** The proxy and CA variables the process's way out reads (upstream.ts); nothing else of the runtime's env crosses. */
export const WAY_OUT_ENV_NAMES = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy", "NODE_EXTRA_CA_CERTS"] as const;

/**
 * The proxy (tls-proxy.ts) keeps at most this many connections not yet authenticated (no accepted
 * CONNECT) at once; a new one past it drops the oldest: a real CLI sends its CONNECT within
 * milliseconds of connecting, so it is never the oldest for long, while refusing new ones instead would
 * let a flood hold the port until its deadline. A runtime's own CLIs open a few at once.
 */
export const UNAUTHENTICATED_MAX = 256;
/** How long a connection may stay unauthenticated (a real CLI needs milliseconds; seconds cover a loaded machine). */
export const UNAUTHENTICATED_DEADLINE_MS = 5_000;
