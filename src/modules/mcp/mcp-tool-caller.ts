import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../../context/request-context';
import { GatewayError } from '../../common/errors/gateway-error';
import { uuidv7 } from '../../common/ids';
import { RequestLogger } from '../logging/request-logger';
import { McpCallRefused, McpClientPool } from './mcp-client-pool';
import type { McpCallResult, McpServerTarget } from './mcp-types';
import { resultText } from './tool-dialects';

/** One tool call done: the server's result, or why it was refused before it was sent. */
export interface ToolCallOutcome {
  result: McpCallResult | null;
  refusal: { status: number; code: string | null; message: string } | null;
  /** Whether the caller sees an error (a refusal, or the server's `isError`). */
  isError: boolean;
  /** What a model reads of it. */
  text: string;
  latencyMs: number;
  /** The id of the call's own log row. */
  logId: string;
}

/**
 * Runs one MCP tool call for the tool loop or the proxy, and writes its log row
 * (operation `mcp.tools.call`, under the request's trace id). Whatever goes wrong
 * (the tool not allowed, arguments off its schema, the server down or slow) comes back
 * as an outcome, never a throw, so one bad call cannot break a request.
 */
@Injectable()
export class McpToolCaller {
  constructor(
    private readonly pool: McpClientPool,
    private readonly logger: RequestLogger,
  ) {}

  async call(context: RequestContext, server: McpServerTarget, tool: string, args: unknown, refusedBefore: string | null = null): Promise<ToolCallOutcome> {
    const logId = uuidv7();
    const createdAt = new Date();
    const started = performance.now();
    let result: McpCallResult | null = null;
    let refusal: ToolCallOutcome['refusal'] = refusedBefore ? { status: 400, code: 'invalid_arguments', message: refusedBefore } : null;
    if (!refusal) {
      try {
        result = await this.pool.call(server, tool, args, context.abort.signal);
      } catch (error) {
        if (error instanceof McpCallRefused) refusal = { status: error.code === 'tool_not_allowed' ? 403 : 400, code: error.code, message: error.message };
        else if (error instanceof GatewayError) refusal = { status: error.status, code: error.code, message: error.message };
        else throw error;
      }
    }
    const latencyMs = Math.round(result?.latencyMs ?? performance.now() - started);
    const isError = refusal !== null || result!.isError;
    const text = refusal ? `Error: ${refusal.message}` : resultText(result!);
    this.logger.toolCallLogged(context, {
      id: logId,
      createdAt,
      server: server.slug,
      tool,
      arguments: args,
      result: result
        ? { content: result.content, ...(result.structuredContent ? { structuredContent: result.structuredContent } : {}), isError: result.isError }
        : null,
      isError,
      error: refusal ? { code: refusal.code, message: refusal.message } : isError ? { code: null, message: text.slice(0, 1000) } : null,
      latencyMs,
      statusCode: refusal?.status ?? 200,
    });
    return { result, refusal, isError, text, latencyMs, logId };
  }
}
