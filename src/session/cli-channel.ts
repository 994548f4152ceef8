/**
 * A CLI process as a channel of checked messages, the layer under `PooledProcess`: stdout lines parsed
 * and checked against the stream-json protocol, our own control requests and their replies
 * (`ControlRequests`), a spare's early output held for its first call, and every line in both
 * directions handed to the running call's transcript. What a message means for a call is the
 * process's (pooled-process.ts); this layer knows no calls.
 */
import { ProtocolError } from "../errors/index.js";
import { type CliMessage, parseCliMessage } from "../protocol/messages.js";
import { CliProcess, type CliProcessOptions, type ExitInfo } from "../transport/process.js";
import { ControlRequests, type WireDirection } from "./control.js";
import type { Logger } from "./logger.js";

export type Wire = (direction: WireDirection, text: string) => void;

/** What the channel reports to the process above it. */
export interface ChannelEvents {
  /** A stdout line arrived, before it is parsed (the idle clock). */
  lineArrived(): void;
  /** A checked message that is not a reply to one of our requests. */
  message(message: CliMessage): void;
  /** The stream broke (an invalid or oversized line): `error` for the call, `reason` retires the process. */
  broken(error: ProtocolError, reason: string): void;
  /** A non-JSON stdout line: skipped, but a process that wrote one is not reused. */
  noise(text: string): void;
  stdoutEnd(): void;
  exit(exit: ExitInfo): void;
  /** One of our requests got no reply in time: the process cannot be trusted any more. */
  unanswered(reason: string): void;
}

export class CliChannel {
  readonly proc: CliProcess;
  readonly requests: ControlRequests;
  /** Non-JSON stdout lines so far, and the first one (for the crash message). */
  noiseLines = 0;
  firstNoise = "";
  /** The running call's transcript hook; undefined between calls. */
  private wire: Wire | undefined;
  /**
   * Until the first call attaches, stdout lines are held: with an in-process MCP server on argv the CLI
   * opens it at boot (an `mcp_message` request), before any `initialize`. They are the first call's to answer.
   */
  private holding = true;
  private readonly heldLines: string[] = [];
  /** stderr written while no call was running (a spare booting), handed to the next call's transcript. */
  private heldStderr = "";

  constructor(
    options: CliProcessOptions,
    private readonly events: ChannelEvents,
    private readonly logger: Logger,
  ) {
    this.requests = new ControlRequests((line) => this.write(line), (reason) => events.unanswered(reason));
    this.proc = new CliProcess(options, {
      line: (text) => this.onLine(text),
      oversizedLine: (bytes, limit) =>
        events.broken(new ProtocolError(`The CLI wrote a ${bytes}-byte line, over maxLineBytes=${limit}; the message was dropped and the run stopped. Raise maxLineBytes if such output is expected.`), "oversized line"),
      stderr: (text) => (this.wire ? this.wire("stderr", text) : (this.heldStderr = (this.heldStderr + text).slice(-16_384))),
      writeDropped: (text, reason) => {
        this.wire?.("dropped", text);
        this.logger.warn(`write to CLI dropped (${reason})`);
      },
      stdoutEnd: () => events.stdoutEnd(),
    });
    void this.proc.exited.then((exit) => events.exit(exit));
  }

  /** A call starts: its transcript gets every line from now on, first the stderr and lines held for it. */
  attach(wire: Wire | undefined): void {
    this.wire = wire;
    if (this.heldStderr) wire?.("stderr", this.heldStderr);
    this.heldStderr = "";
    this.holding = false;
    for (const line of this.heldLines.splice(0)) this.onLine(line);
  }

  /** The call is over: lines between calls reach no transcript. */
  detach(): void {
    this.wire = undefined;
  }

  /** One line to the CLI: a value, or a line serialised already (string). */
  write(line: unknown): void {
    const text = typeof line === "string" ? line : JSON.stringify(line);
    if (this.proc.sendText(text)) this.wire?.("out", text);
  }

  private onLine(text: string): void {
    if (this.holding) {
      this.heldLines.push(text);
      return;
    }
    this.wire?.("in", text);
    this.events.lineArrived();
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // Peers saw non-JSON noise on stdout: kept reading, reported if the call fails, and the process is not reused.
      if (this.noiseLines++ === 0) this.firstNoise = text.slice(0, 200);
      this.logger.warn(`ignored a non-JSON stdout line: ${text.slice(0, 200)}`);
      this.events.noise(text);
      return;
    }
    const parsed = parseCliMessage(value);
    if (parsed.kind === "invalid") {
      this.events.broken(new ProtocolError(`The CLI wrote a message that does not match the stream-json protocol: ${parsed.issues}\nLine: ${text.slice(0, 500)}`), "invalid message");
      return;
    }
    // Replies to `interrupt` and `end_session` are not awaited.
    if (parsed.kind === "control_response") this.requests.settle(parsed.message.response);
    else this.events.message(parsed);
  }
}
