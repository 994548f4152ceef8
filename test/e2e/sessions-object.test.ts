/**
 * Structured output per turn on the real CLI (scripted API, first-party path behind the interceptor): a
 * session created with a schema answers every turn through the CLI's StructuredOutput tool, and each
 * turn's `result.object` is validated with it; the CLI's own schema retry inside a turn, and the earlier
 * turns' objects in later requests, pass the wire check.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ClaudeCodeHost, StructuredOutputError } from "../../src/index.js";
import { RateLimitGovernor } from "../../src/limits/governor.js";
import { type RecordedRequest, type ScriptedTurn, turn } from "../../src/testing/scripted-api.js";
import { TEST_PASS_ENV, cleanup, cliOption, firstPartyApi, firstPartyEnv, remainingChildren, tempDir } from "../support.js";

afterEach(async () => {
  await cleanup();
});

const textsOf = (request: RecordedRequest): string[] =>
  (request.body?.messages ?? []).flatMap((message: { content?: unknown }) =>
    typeof message.content === "string" ? [message.content] : ((message.content ?? []) as Array<{ type?: string; text?: string }>).filter((block) => block.type === "text").map((block) => block.text ?? ""),
  );

/** The turn a request belongs to (the last `case=`), and whether the CLI already answered a StructuredOutput call in it (its schema retry). */
function script(request: RecordedRequest): ScriptedTurn {
  const messages: Array<{ role: string; content?: unknown }> = request.body?.messages ?? [];
  const at = messages.findLastIndex((message) => message.role === "user" && textsOf({ body: { messages: [message] } } as RecordedRequest).some((text) => text.includes("case=")));
  const name = [...textsOf({ body: { messages: [messages[at]] } } as RecordedRequest).join("\n").matchAll(/case=(\w+)/g)].at(-1)?.[1];
  const retried = messages.slice(at + 1).some((message) => message.role === "user");
  switch (name) {
    case "paris":
      return turn.object({ city: "Paris", population: 2 });
    case "rome":
      // A first answer that fails the schema: the CLI tells the model so and asks again.
      return retried ? turn.object({ city: "Rome", population: 3 }) : turn.object({ city: "Rome", population: "many" });
    case "prose":
      return turn.text("Just prose, no object.");
    case "oslo":
      return turn.object({ city: "Oslo", population: 1 });
    default:
      return turn.text(`unexpected ${name}`);
  }
}

describe("session structured output", () => {
  it("a session with a schema gives each turn's object, validated; the CLI's schema retry and the earlier objects pass the wire check", { timeout: 240_000 }, async () => {
    const api = await firstPartyApi(script);
    const host = new ClaudeCodeHost({ projectDir: tempDir("project"), env: firstPartyEnv(api), passEnv: TEST_PASS_ENV, ...cliOption(), warm: false, rateLimitGovernor: new RateLimitGovernor() });
    expect(host.interceptor).toBe("on");
    const City = z.object({ city: z.string(), population: z.number() });
    const session = host.createSession({ model: "sonnet", system: "Answer with the city asked about.", schema: City });
    try {
      const first = await session.send("case=paris which city?").result;
      expect(first.object).toEqual({ city: "Paris", population: 2 });
      // Typed by the schema.
      const population: number | undefined = first.object?.population;
      expect(population).toBe(2);
      const [pid] = host.reusePids;

      const second = await session.send("case=rome and the next?").result;
      expect(second.object).toEqual({ city: "Rome", population: 3 });
      // Two requests in turn 2: the invalid answer, then the CLI's retry with the schema error as the tool's result.
      const retry = api.messageRequests.at(-1)!;
      expect(JSON.stringify(retry.body.messages)).toContain("Output does not match required schema");

      // A turn that ends in prose fails with StructuredOutputError; the conversation goes on.
      const prose = await session.send("case=prose say something").result.catch((error: unknown) => error);
      expect(prose).toBeInstanceOf(StructuredOutputError);

      const fourth = await session.send("case=oslo last one").result;
      expect(fourth.object).toEqual({ city: "Oslo", population: 1 });
      expect(host.reusePids).toEqual([pid]);
      // Turn 4's request carries the earlier turns, their StructuredOutput calls included, and the schema as the CLI's tool.
      const last = api.messageRequests.at(-1)!;
      const sent = JSON.stringify(last.body.messages);
      for (const text of ["case=paris", "case=rome", "case=oslo", '"name":"StructuredOutput"', '"city":"Paris"']) expect(sent).toContain(text);
      expect(last.body.tools.map((tool: { name: string }) => tool.name)).toContain("StructuredOutput");
      expect(session.history.map((record) => record.result?.object ?? record.error?.name)).toEqual([
        { city: "Paris", population: 2 },
        { city: "Rome", population: 3 },
        "StructuredOutputError",
        { city: "Oslo", population: 1 },
      ]);
    } finally {
      await session.close();
      await host.close();
    }
    expect(await remainingChildren()).toEqual([]);
  });
});
