/**
 * `ktx-claude-code/ai-sdk`: KTX's port over the AI SDK (`AiSdkKtxLlmRuntime`) and the factory that also
 * builds the anthropic backend. A separate entry point so the core package needs neither `ai` nor
 * `@ai-sdk/anthropic`: both are optional peers, installed by whoever imports this.
 */
export { AiSdkKtxLlmRuntime, AiSdkCallError, isAnthropicProtocolModel, type AiSdkKtxLlmRuntimeOptions } from "./runtime.js";
export { createKtxLlmRuntime, type CreateKtxLlmRuntimeOptions, type KtxLlmRuntime } from "./factory.js";
