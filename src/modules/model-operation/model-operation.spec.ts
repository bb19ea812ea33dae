import { RequestContext } from '../../context/request-context';
import type { McpToolLoop } from '../mcp/mcp-tool-loop';
import type { ToolDialect } from '../mcp/tool-dialects';
import type { GatewayResult } from '../routing/gateway-result';
import type { AttemptSender, RouteExecutor } from '../routing/route-executor';
import { ModelOperation, type ModelDialect } from './model-operation';

const RESULT = { kind: 'json', status: 200, body: Buffer.from('{}'), outcome: null } as unknown as GatewayResult;
const DIALECT: ModelDialect = {
  texts: { request: () => [], answer: () => [], streamError: () => '' },
  tools: { name: 'tools' } as unknown as ToolDialect,
  opening: (body) => ({ stream: body.stream === true, user: typeof body.who === 'string' ? body.who : null }),
};

function operation() {
  const executed: { context: RequestContext; body: Record<string, unknown>; send: AttemptSender; texts: unknown }[] = [];
  const executor = {
    execute: (context: RequestContext, body: Record<string, unknown>, send: AttemptSender, options: { texts?: unknown }) => {
      executed.push({ context, body, send, texts: options.texts });
      return Promise.resolve(RESULT);
    },
  } as unknown as RouteExecutor;
  const loops: { slugs: string[]; dialect: ToolDialect }[] = [];
  const mcpLoop = {
    run: async (
      _context: RequestContext,
      body: Record<string, unknown>,
      slugs: string[],
      dialect: ToolDialect,
      round: (b: Record<string, unknown>) => Promise<GatewayResult>,
    ) => {
      loops.push({ slugs, dialect });
      await round(body);
      return round({ ...body, round: 2 });
    },
  } as unknown as McpToolLoop;
  return { model: new ModelOperation(executor, mcpLoop), executed, loops };
}

describe('ModelOperation', () => {
  const send: AttemptSender = () => Promise.resolve(RESULT);

  it('opens the context as the dialect reads the body and runs the executor with its texts and the attempt', async () => {
    const { model, executed, loops } = operation();
    const context = new RequestContext('trace', {});
    const body = { model: 'm', stream: true, who: 'user-7' };
    await expect(model.run(context, body, DIALECT, send)).resolves.toBe(RESULT);
    expect(loops).toEqual([]);
    expect(executed).toHaveLength(1);
    expect(executed[0]).toMatchObject({ body, send, texts: DIALECT.texts });
    expect([context.isStream, context.user, context.requestBody]).toEqual([true, 'user-7', body]);
  });

  it("goes through the MCP tool loop with the dialect's tools when x-gateway-mcp names servers; the log keeps the first round's body", async () => {
    const { model, executed, loops } = operation();
    const context = new RequestContext('trace', { 'x-gateway-mcp': 'docs,search' });
    const body = { model: 'm' };
    await model.run(context, body, DIALECT, send);
    expect(loops).toEqual([{ slugs: ['docs', 'search'], dialect: DIALECT.tools }]);
    expect(executed.map((run) => run.body)).toEqual([body, { model: 'm', round: 2 }]);
    expect(context.requestBody).toBe(body);
  });
});
