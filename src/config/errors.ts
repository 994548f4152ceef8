/** The configuration's typed errors, shared by the parser and the reference resolver. */
import { ClaudeCodeError } from "../errors/index.js";

export interface KtxConfigIssue {
  /** Dotted path from the root of ktx.yaml, e.g. `llm.provider.backend`. */
  path: string;
  message: string;
}

/** The `llm` configuration cannot be used; `issues` name each offending path. */
export class KtxLlmConfigError extends ClaudeCodeError {
  override readonly code: string = "invalid_llm_config";
  constructor(
    readonly issues: readonly KtxConfigIssue[],
    readonly source?: string,
  ) {
    super(
      `Invalid KTX llm configuration${source ? ` in ${source}` : ""}:\n${issues.map((issue) => `  - ${issue.path}: ${issue.message}`).join("\n")}`,
    );
  }
}
