/**
 * The AI SDK runtime of `ktx-claude-code/ai-sdk` against KTX's port as port-conformance.ts restates it:
 * `npm test` type-checks this file, so the suite fails to compile if `AiSdkKtxLlmRuntime` or what that entry's
 * factory returns stops fitting KTX's port, or if its `generateObjectResult` stops being typed by its schema.
 * Kept apart from port-conformance.ts, which the packed-package test compiles in an app without `ai`.
 */
import type { z } from "zod";
import type { AiSdkKtxLlmRuntime, KtxLlmRuntime } from "../../src/ai-sdk/index.js";
import { type Equal, type KtxPort, exact } from "./port-conformance.js";

export function aiSdkPorts(aiSdk: AiSdkKtxLlmRuntime, fromFactory: KtxLlmRuntime): KtxPort[] {
  return [aiSdk, fromFactory];
}

export async function aiSdkInferredObject(aiSdk: AiSdkKtxLlmRuntime, schema: z.ZodObject<{ title: z.ZodString; rows: z.ZodOptional<z.ZodNumber> }>): Promise<number> {
  const rich = await aiSdk.generateObjectResult({ prompt: "p", schema });
  exact<Equal<typeof rich.object, { title: string; rows?: number | undefined }>>(true);
  return rich.object.title.length;
}
