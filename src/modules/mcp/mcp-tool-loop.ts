import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { from, lastValueFrom, toArray } from 'rxjs';
import type { RequestContext } from '../../context/request-context';
import { GatewayError } from '../../common/errors/gateway-error';
import type { Environment } from '../../config/environment';
import type { AnswerOutcome } from '../../context/attempt';
import type { GatewayResult } from '../routing/gateway-result';
import { McpCatalog } from './mcp-catalog';
import { McpToolCaller } from './mcp-tool-caller';
import type { McpServerTarget } from './mcp-types';
import type { ModelToolCall, OfferedTool, ToolDialect, ToolResultText } from './tool-dialects';

/** Sends one model round through the operation's usual path (executor, routing, guardrails, budgets). */
export type ModelRound = (body: Record<string, unknown>) => Promise<GatewayResult>;

/** A round's answer, read whole: the result to hand back as it came, and the answer object. */
interface RoundAnswer {
  result: GatewayResult;
  outcome: AnswerOutcome;
}

const HEADER = 'x-gateway-mcp';
const SLUG = /^[a-z0-9-]+$/;

/**
 * The servers whose tools the gateway runs for this request: `x-gateway-mcp: a,b`, else
 * the config's `mcp_servers`; null when none (the common case: one header read).
 */
export function requestedMcpServers(context: RequestContext): string[] | null {
  const header = context.requestHeaders[HEADER];
  if (typeof header === 'string' && header.trim() !== '') {
    const slugs = [
      ...new Set(
        header
          .split(',')
          .map((slug) => slug.trim())
          .filter(Boolean),
      ),
    ];
    const bad = slugs.find((slug) => !SLUG.test(slug));
    if (bad !== undefined)
      throw GatewayError.invalidRequest(
        `${HEADER} must list MCP server slugs ([a-z0-9-]+) separated by commas; '${bad.slice(0, 64)}' is not one`,
        HEADER,
        'invalid_header',
      );
    return slugs;
  }
  const fromConfig = context.route?.root.mcpServers;
  return fromConfig?.length ? fromConfig : null;
}

/**
 * Gateway-run tools (CONTRACT section 10): offers the requested servers' allowed tools to
 * the model in the operation's own tool shape, runs the model's calls to them, feeds the
 * results back and asks again, until the model answers without calling one (at most
 * MCP_MAX_TURNS rounds). Each round is an ordinary request through the executor, so
 * routing, retries, budgets, rate limits, guardrails and the per-attempt log rows apply
 * to every round; each tool call is a log row of its own, listed on the request's row.
 *
 * A stream is answered once the loop is over: each round is read whole (a tool round's
 * frames are not the client's), and the last round's frames are handed back as they came.
 */
@Injectable()
export class McpToolLoop {
  private readonly maxTurns: number;

  constructor(
    private readonly catalog: McpCatalog,
    private readonly caller: McpToolCaller,
    config: ConfigService<Environment, true>,
  ) {
    this.maxTurns = config.get('MCP_MAX_TURNS', { infer: true });
  }

  async run(context: RequestContext, body: Record<string, unknown>, slugs: string[], dialect: ToolDialect, round: ModelRound): Promise<GatewayResult> {
    context.begin({ body }); // the log shows what the client sent, not the tools the gateway added
    const allowed = await this.catalog.servers(context, slugs, (slug) =>
      GatewayError.invalidRequest(`MCP server '${slug}' is not registered (${HEADER} or the config's mcp_servers)`, HEADER, 'unknown_mcp_server'),
    );
    const tools = await this.catalog.tools(context, allowed, { prefixed: true, skipUnreachable: false });
    const servers = new Map(allowed.map(({ server }) => [server.slug, server]));
    const clientNames = new Set(dialect.clientToolNames(body));
    const taken = tools.find((tool) => clientNames.has(tool.name));
    if (taken)
      throw GatewayError.invalidRequest(
        `The request's own tool '${taken.name}' has the name the gateway gives MCP tool '${taken.tool}' of server '${taken.server}'; rename it`,
        'tools',
        'mcp_tool_name_conflict',
      );
    const byName = new Map(tools.map((tool) => [tool.name, tool]));

    let current = dialect.withTools(body, tools);
    for (let turn = 1; ; turn++) {
      // Each round is a model request of its own for the keys' request rate limits (a retry within a round is not).
      context.rateLimited.clear();
      const { result, outcome } = await this.answerOf(await round(current));
      const calls = dialect.toolCalls(outcome.responseBody);
      const mcpCalls = calls.filter((call) => byName.has(call.name));
      // A clean answer without MCP calls, or one that broke: the client's.
      if (!mcpCalls.length || outcome.error) return result;
      if (mcpCalls.length < calls.length) {
        // The client's own tools end the loop; the MCP calls it could not answer are left out.
        const answer = dialect.withoutCalls(outcome.responseBody, new Set(mcpCalls.map((call) => call.id)));
        return replaced(result, answer, dialect, body);
      }
      if (turn >= this.maxTurns) {
        throw GatewayError.invalidRequest(
          `The model still called MCP tools after ${this.maxTurns} rounds (MCP_MAX_TURNS): ${mcpCalls.map((call) => call.name).join(', ')}`,
          null,
          'mcp_max_turns',
        );
      }
      const results = await Promise.all(mcpCalls.map((call) => this.runCall(context, turn, call, byName.get(call.name)!, servers)));
      current = dialect.continued(current, outcome.responseBody, results);
    }
  }

  /** Reads a round's answer whole; a stream's frames are kept to hand back if it is the last. */
  private async answerOf(result: GatewayResult): Promise<RoundAnswer> {
    if (result.kind === 'json') return { result, outcome: result.outcome };
    if (result.kind === 'binary') throw GatewayError.upstreamMalformed('The provider answered a tool round with a binary body');
    const frames = await lastValueFrom(result.frames.pipe(toArray()), { defaultValue: [] as string[] });
    const outcome = await result.outcome;
    return { result: { ...result, frames: from(frames), outcome: Promise.resolve(outcome) }, outcome };
  }

  /** Runs one call (see McpToolCaller) and lists it on the request's row. */
  private async runCall(
    context: RequestContext,
    round: number,
    call: ModelToolCall,
    tool: OfferedTool,
    servers: Map<string, McpServerTarget>,
  ): Promise<ToolResultText> {
    const done = await this.caller.call(context, servers.get(tool.server)!, tool.tool, call.arguments, call.argumentsError ?? null);
    context.toolCalls.push({
      round,
      call_id: call.id,
      server: tool.server,
      tool: tool.tool,
      is_error: done.isError,
      latency_ms: done.latencyMs,
      log_id: done.logId,
    });
    return { call, text: done.text, isError: done.isError };
  }
}

/** The answer changed (MCP calls left out): the JSON re-encoded, or the stream rendered anew from it. */
function replaced(result: GatewayResult, answer: unknown, dialect: ToolDialect, body: Record<string, unknown>): GatewayResult {
  if (result.kind === 'json') return { ...result, body: Buffer.from(JSON.stringify(answer)), outcome: { ...result.outcome, responseBody: answer } };
  if (result.kind === 'sse') return { ...result, frames: from(dialect.frames(answer, body)) };
  return result;
}
