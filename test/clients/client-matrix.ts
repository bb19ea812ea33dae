/**
 * The tests every client gets, against each target its format allows: a plain answer, a
 * streamed answer, and a tool round trip (the mock calls the first tool offered, the client
 * sends the result back, the mock answers), each followed by the key's log rows.
 */
import { ALL_TARGETS, ClientWorld, expectLoggedOk, GatewayKey, logRowsOf, MOCK_TEXT, startClientWorld, Target, upstreamCalls } from './client-harness';

export interface ToolExchange {
  /** The final answer's text. */
  text: string;
  /** The names of the tools the model called (as the client saw them). */
  toolCalls: string[];
}

export interface ClientDriver {
  /** The gateway operation the client's requests are logged under. */
  operation: string;
  plain(key: GatewayKey): Promise<string>;
  stream(key: GatewayKey): Promise<string>;
  tool(key: GatewayKey): Promise<ToolExchange>;
  /** The tool the mock calls (the first the client offers). */
  expectedTool: string;
  /** The model logged for this target (default: the target's model, which the driver sends). */
  loggedModel?(target: Target): string;
  /** Upstream requests one plain exchange makes (default 1; a CLI may make more). */
  requestsPerAnswer?: number;
}

/** The tool's result in the vendor's own shape, in the last upstream request. */
export function expectToolResultSent(target: Target, body: any): void {
  const json = JSON.stringify(body);
  if (target.name === 'anthropic') expect(json).toContain('"type":"tool_result"');
  else if (target.name === 'gemini') expect(json).toContain('"functionResponse"');
  else if (Array.isArray(body?.input)) expect(json).toContain('"type":"function_call_output"');
  else expect(body.messages.some((m: any) => m.role === 'tool')).toBe(true);
}

/** The names of the tool calls in the history of an upstream request, in the vendor's own shape. */
export function toolCallsInHistory(target: Target, body: any): string[] {
  if (target.name === 'anthropic')
    return (body.messages ?? [])
      .flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
      .filter((b: any) => b.type === 'tool_use')
      .map((b: any) => b.name);
  if (target.name === 'gemini')
    return (body.contents ?? [])
      .flatMap((c: any) => c.parts ?? [])
      .filter((p: any) => p.functionCall)
      .map((p: any) => p.functionCall.name);
  if (Array.isArray(body?.input)) return body.input.filter((i: any) => i.type === 'function_call').map((i: any) => i.name);
  return (body.messages ?? []).flatMap((m: any) => m.tool_calls ?? []).map((c: any) => c.function.name);
}

export function describeClient(title: string, makeDriver: (world: ClientWorld) => ClientDriver, targets: Target[] = ALL_TARGETS): void {
  describe(title, () => {
    let world: ClientWorld;
    let driver: ClientDriver;

    beforeAll(async () => {
      world = await startClientWorld();
      driver = makeDriver(world);
    }, 240_000);

    afterAll(async () => {
      await world?.close();
    });

    beforeEach(() => world?.mock.reset());

    // CONTRACT 12: the gateway key the client sent as its API key never reaches a provider.
    afterEach(() => {
      for (const request of world?.mock.requests ?? []) expect(JSON.stringify(request.headers)).not.toMatch(/gk-[A-Za-z0-9_-]{8,}/);
    });

    describe.each(targets)('against the $name target', (target) => {
      const model = () => driver.loggedModel?.(target) ?? target.model;
      const perAnswer = () => driver.requestsPerAnswer ?? 1;

      it('answers plainly, logged with status 200 and tokens', async () => {
        const key = await world.keyFor(target, `${title} plain ${target.name}`);
        expect(await driver.plain(key)).toContain(MOCK_TEXT);
        expect(upstreamCalls(world, target)).toHaveLength(perAnswer());
        expectLoggedOk(await logRowsOf(world, key), key, driver.operation, perAnswer(), model());
      });

      it('answers streamed, logged with status 200 and tokens', async () => {
        const key = await world.keyFor(target, `${title} stream ${target.name}`);
        expect(await driver.stream(key)).toContain(MOCK_TEXT);
        const calls = upstreamCalls(world, target);
        expect(calls).toHaveLength(perAnswer());
        expectLoggedOk(await logRowsOf(world, key), key, driver.operation, perAnswer(), model());
      });

      it('calls a tool, sends its result back and answers; both requests logged', async () => {
        const key = await world.keyFor(target, `${title} tool ${target.name}`);
        const exchange = await driver.tool(key);
        expect(exchange.toolCalls).toEqual([driver.expectedTool]);
        expect(exchange.text).toContain(MOCK_TEXT);
        const calls = upstreamCalls(world, target);
        expect(calls).toHaveLength(2 * perAnswer());
        expectToolResultSent(target, calls[calls.length - 1].body);
        expectLoggedOk(await logRowsOf(world, key), key, driver.operation, 2 * perAnswer(), model());
      });
    });
  });
}

export { startClientWorld };
