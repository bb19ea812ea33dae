import { Injectable } from '@nestjs/common';
import type { ErrorShape } from '../../common/errors/error-shape';
import type { OperationRequest, RequestContext } from '../../context/request-context';
import type { OperationTexts } from '../guardrails/operation-texts';
import { McpToolLoop, requestedMcpServers } from '../mcp/mcp-tool-loop';
import type { ToolDialect } from '../mcp/tool-dialects';
import type { GatewayResult } from '../routing/gateway-result';
import { RouteExecutor, type AttemptSender } from '../routing/route-executor';

/**
 * A wire format a client speaks to ask a model (OpenAI chat, OpenAI Responses, Anthropic
 * Messages): what ModelOperation needs of it besides the attempt itself.
 */
export interface ModelDialect {
  /** Where its bodies' and answers' texts are, for the guardrails, and its stream's error frame. */
  readonly texts: OperationTexts;
  /** How its bodies offer tools and its answers call them, for the MCP tool loop. */
  readonly tools: ToolDialect;
  /** What its body says of the request: whether the answer streams, and the end user. */
  opening(body: Record<string, unknown>): Omit<OperationRequest, 'body'>;
  /** Its error bodies and the routes they are on, when not OpenAI's (registered in dialects.ts). */
  readonly errors?: ErrorShape;
}

/**
 * Runs one model operation, whatever its dialect: through the MCP tool loop when the
 * request names MCP servers (`x-gateway-mcp` or the config's), each round (or the one
 * request) opening the context and going through the route executor, which calls `send`
 * for each attempt at a target. A dialect's service brings only its attempt.
 */
@Injectable()
export class ModelOperation {
  constructor(
    private readonly executor: RouteExecutor,
    private readonly mcpLoop: McpToolLoop,
  ) {}

  run(context: RequestContext, body: Record<string, unknown>, dialect: ModelDialect, send: AttemptSender): Promise<GatewayResult> {
    // A prompt call or a tool loop has logged its own body: begin keeps the first.
    const once = (round: Record<string, unknown>) =>
      this.executor.execute(context.begin({ body: round, ...dialect.opening(round) }), round, send, { texts: dialect.texts });
    const mcpServers = requestedMcpServers(context);
    return mcpServers ? this.mcpLoop.run(context, body, mcpServers, dialect.tools, once) : once(body);
  }
}
