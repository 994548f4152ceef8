/**
 * The interceptor's process (docs/isolation.md, "The wire check"): the runtime forks it with an empty
 * environment and talks to it over IPC only (process-protocol.ts). It runs the interceptor
 * (interceptor.ts): terminates each CLI's TLS, checks and forwards its requests, and tells the runtime
 * what each call sent and when a request was stopped. It exits when the runtime's channel closes, so
 * it never outlives its runtime, even one killed with SIGKILL.
 */
import type { IsolationError } from "../../errors/index.js";
import { rmSync } from "node:fs";
import type { FromProcess, ToProcess } from "./process-protocol.js";
import { WireInterceptor, type WireSession } from "./interceptor.js";

const send = (message: FromProcess) => process.send?.(message);

if (!process.send) {
  process.stderr.write("ktx-claude-code: the interceptor's process is started by the runtime, over IPC\n");
  process.exit(2);
}

let interceptor: WireInterceptor | undefined;
/** The call running on each session, and what its tools returned so far. */
const calls = new Map<string, { call: number; toolOutputs: Map<string, string[]> }>();

// Sessions are made when a CLI first connects or a call is announced, whichever comes first.
const session = (name: string): WireSession => interceptor!.openSession(name);

/** The socket and CA file the runtime made (the `listen` message). */
let listening: { socket: unknown; caFile: string } | undefined;

/** The directory of the CA file the runtime writes (its argument), removed when this process exits. */
const caDir = process.argv[2];

// The runtime closed its channel (close(), its exit, or SIGKILL): the CA file goes with it.
process.on("disconnect", () => {
  interceptor?.removeFiles();
  if (caDir) rmSync(caDir, { recursive: true, force: true });
  process.exit(0);
});

/**
 * The runtime sends `start` and then, without waiting for `ready`, its calls' messages (its CLIs are already
 * pointed at the socket it handed over): they are handled once the interceptor is up, in the order sent.
 */
let started: Promise<unknown> | undefined;
/** Messages sent before `start` (the runtime sends it once its certificates are signed, and may announce a call first). */
const early: Array<Exclude<ToProcess, { type: "start" | "listen" }>> = [];
process.on("message", (message: ToProcess, socket?: unknown) => {
  if (message.type === "listen") {
    listening = { socket, caFile: message.caFile };
    return;
  }
  if (message.type !== "start") {
    if (started) void started.then(() => handle(message));
    else early.push(message);
    return;
  }
  started = WireInterceptor.start({
    env: message.env,
    bodies: message.bodies,
    upstream: message.upstream,
    secret: message.secret,
    issued: message.issued,
    caFile: listening?.caFile,
    listenOn: listening?.socket,
    events: (name) => ({
      onStop: (error) => send({ type: "stop", session: name, call: calls.get(name)?.call, differences: [...error.differences] }),
      onRefusal: (what) => send({ type: "refused", session: name, what }),
      onRecords: (records) => {
        const call = calls.get(name)?.call;
        if (call !== undefined) send({ type: "records", session: name, call, records });
      },
    }),
  }).then(
    (started) => {
      interceptor = started;
      send({ type: "ready", port: started.port, caFile: started.caFile });
    },
    (error: Error) => send({ type: "failed", message: error.message }),
  );
  for (const message of early.splice(0)) void started.then(() => handle(message));
});

function handle(message: Exclude<ToProcess, { type: "start" | "listen" }>): void {
  // A start that failed was reported (`failed`); the runtime kills the process.
  if (!interceptor) return;
  switch (message.type) {
    case "version":
      interceptor?.useVersion(message.version);
      return;
    case "begin": {
      const toolOutputs = new Map<string, string[]>();
      calls.set(message.session, { call: message.call, toolOutputs });
      try {
        session(message.session).beginCall({ ...message.expectation, toolOutputs }, () => {});
        interceptor!.callBegins(message.session);
      } catch (error) {
        // Stopped before: the runtime hears of it again, for this call.
        send({ type: "stop", session: message.session, call: message.call, differences: [...(error as IsolationError).differences] });
      }
      return;
    }
    case "tool": {
      const running = calls.get(message.session);
      if (running?.call === message.call) running.toolOutputs.set(message.id, message.texts);
      send({ type: "acked", reply: message.ack });
      return;
    }
    case "mcpTools": {
      const running = calls.get(message.session);
      if (running?.call === message.call) interceptor?.sessionNamed(message.session)?.setMcpTools(message.names);
      return;
    }
    case "end": {
      const running = calls.get(message.session);
      if (running?.call === message.call) calls.delete(message.session);
      const ended = interceptor?.sessionNamed(message.session)?.endCall() ?? { forwarded: 0, records: [] };
      if (message.reply !== undefined) send({ type: "ended", reply: message.reply, forwarded: ended.forwarded, records: ended.records });
      return;
    }
    case "ping":
      send({ type: "acked", reply: message.reply });
      return;
    case "drop":
      calls.delete(message.session);
      interceptor?.dropSession(message.session);
      return;
  }
}
