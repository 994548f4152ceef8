/**
 * `ktx-claude-code/provider`: an AI SDK provider on the local Claude Code login. `createClaudeCode(options)`
 * gives `provider(modelId, settings?)` → a `LanguageModelV3` that `generateText`, `streamText`,
 * `generateObject` and `streamObject` of `ai` 6 take (and `ai` 7 through its V3 adapter). Calls run on a
 * `ClaudeCodeHost`'s pooled CLI processes — the provider's own, or one shared with KTX's runtime — and the
 * app's tools run in the app: a step that calls them ends with `tool-calls`, its CLI waiting (parked) for the
 * results the next step's prompt brings (docs/guides/ai-sdk-provider.md).
 */
import { ClaudeCodeHost, type ClaudeCodeHostOptions } from "../claude-code/host.js";
import { resolveRoleModels } from "../claude-code/models.js";
import { InvalidInputError } from "../errors/index.js";
import { silentLogger } from "../session/logger.js";
import { ParkedTurnAbortedError } from "./errors.js";
import { type ClaudeCodeModelSettings, ClaudeCodeLanguageModel, type ProviderContext, parseModelSettings } from "./model.js";

export { ClaudeCodeLanguageModel, type ClaudeCodeModelSettings } from "./model.js";
export { ParkedTurnAbortedError, ParkedTurnExpiredError } from "./errors.js";
export { PROVIDER_ID } from "./results.js";

/** How long a turn stopped at the app's tool calls waits for their results by default. */
export const DEFAULT_PARK_MS = 60_000;

interface ProviderOwnOptions {
  /** How long a turn stopped at the app's tool calls waits for the next call bringing their results (ms; default 60 000). */
  parkMs?: number;
}

/** `createClaudeCode({ projectDir, … })` (the provider's own host) or `createClaudeCode({ host })` (a shared one). */
export type CreateClaudeCodeOptions = (ClaudeCodeHostOptions | { host: ClaudeCodeHost }) & ProviderOwnOptions;

export interface ClaudeCodeProvider {
  (modelId: string, settings?: ClaudeCodeModelSettings): ClaudeCodeLanguageModel;
  languageModel(modelId: string, settings?: ClaudeCodeModelSettings): ClaudeCodeLanguageModel;
  /** The host its calls run on (its own, or the one it was given). */
  readonly host: ClaudeCodeHost;
  /**
   * Ends parked turns (their CLIs interrupted) and waits for the provider's turns to end; then closes
   * the host when the provider built it (a given host's owner closes that one).
   */
  close(): Promise<void>;
}

export function createClaudeCode(options: CreateClaudeCodeOptions): ClaudeCodeProvider {
  const { parkMs = DEFAULT_PARK_MS, ...rest } = options as CreateClaudeCodeOptions & { host?: unknown };
  if (!(Number.isFinite(parkMs) && parkMs > 0)) {
    const error = new InvalidInputError(`Invalid createClaudeCode options: parkMs must be a positive number of milliseconds; got ${String(parkMs)}.`);
    error.field = "parkMs";
    throw error;
  }
  const given = (rest as { host?: unknown }).host;
  if (given !== undefined && !(given instanceof ClaudeCodeHost)) {
    const error = new InvalidInputError("Invalid createClaudeCode options: host must be a ClaudeCodeHost (new ClaudeCodeHost({ projectDir, … })).");
    error.field = "host";
    throw error;
  }
  if (given !== undefined && Object.keys(rest).length > 1) {
    const error = new InvalidInputError(`Invalid createClaudeCode options: with \`host\`, the host's options (${Object.keys(rest).filter((key) => key !== "host").join(", ")}) belong in new ClaudeCodeHost({ … }).`);
    error.field = Object.keys(rest).find((key) => key !== "host");
    throw error;
  }
  const host = given ?? new ClaudeCodeHost(rest as ClaudeCodeHostOptions);
  const context: ProviderContext = { host, limits: host.limitsFor(undefined, host.logger ?? silentLogger), parkMs, parked: new Map(), turns: new Set() };
  const languageModel = (modelId: string, settings: ClaudeCodeModelSettings = {}) => {
    const parsed = parseModelSettings(settings, `settings of model ${JSON.stringify(modelId)}`);
    const cliModel = resolveRoleModels({ default: modelId }).default.id;
    return new ClaudeCodeLanguageModel(modelId, cliModel, parsed, context);
  };
  const provider = ((modelId: string, settings?: ClaudeCodeModelSettings) => languageModel(modelId, settings)) as ClaudeCodeProvider;
  Object.defineProperties(provider, {
    languageModel: { value: languageModel },
    host: { value: host },
    close: {
      value: async () => {
        for (const turn of new Set(context.parked.values())) turn.abandon(new ParkedTurnAbortedError(new Error("the provider was closed")));
        await Promise.all([...context.turns].map((turn) => turn.done));
        if (given === undefined) await host.close();
      },
    },
  });
  return provider;
}
