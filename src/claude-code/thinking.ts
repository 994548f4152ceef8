/**
 * The `thinking` runtime option: what each role's requests carry in their `thinking` field. The CLI
 * has no per-request switch, only variables read at launch, so a setting is part of the process's
 * environment (and so of every pool key). Measured on the pinned CLI against the scripted API
 * (docs/parity.md#thinking): `MAX_THINKING_TOKENS=0` sends `thinking: {type: "disabled"}` (2.1.142
 * sends no `thinking` field, which the API reads the same way); a budget needs adaptive thinking off
 * (`CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING=1`), or the CLI keeps `adaptive` on models that have it.
 */
import { z } from "zod";
import { MODEL_ROLES, type ModelRole } from "../runtime/types.js";

/** `"adaptive"`: the CLI's own choice (what KTX's own claude-code backend gets); `"off"`; or a fixed budget. */
export type ThinkingSetting = "adaptive" | "off" | { budgetTokens: number };

/** One setting for every role, or one per role like `models` (`default` for the roles not named). */
export type ThinkingOption = ThinkingSetting | Partial<Record<ModelRole, ThinkingSetting>>;

/** The API's smallest thinking budget. */
export const MIN_THINKING_BUDGET = 1024;

const SETTING = `"adaptive", "off" or { budgetTokens: an integer >= ${MIN_THINKING_BUDGET} }`;

const settingSchema = z.union([z.literal("adaptive"), z.literal("off"), z.strictObject({ budgetTokens: z.number().int().min(MIN_THINKING_BUDGET) })]).describe(SETTING);

export const thinkingOptionSchema = z
  .union([settingSchema, z.strictObject(Object.fromEntries(MODEL_ROLES.map((role) => [role, settingSchema.optional()])))])
  .describe(`${SETTING}, for every role; or one of those per role ({ default: "off", curator: "adaptive", … })`);

const isSetting = (option: ThinkingOption): option is ThinkingSetting => typeof option === "string" || "budgetTokens" in option;

/** The role's setting: its own, else `default`'s, else adaptive. */
export function thinkingFor(option: ThinkingOption | undefined, role: ModelRole): ThinkingSetting {
  if (option === undefined) return "adaptive";
  if (isSetting(option)) return option;
  return option[role] ?? option.default ?? "adaptive";
}

/** The CLI variables that give `setting`; none for adaptive, so a default launch is unchanged. */
export function thinkingEnv(setting: ThinkingSetting): Record<string, string> {
  if (setting === "adaptive") return {};
  if (setting === "off") return { MAX_THINKING_TOKENS: "0" };
  return { CLAUDE_CODE_DISABLE_ADAPTIVE_THINKING: "1", MAX_THINKING_TOKENS: String(setting.budgetTokens) };
}
