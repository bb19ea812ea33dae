import { createHash } from 'node:crypto';
import { isObject } from '../../common/config-fields';
import type { McpCallResult } from './mcp-types';

/**
 * How each model operation names tools, asks for calls and takes results: the gateway's
 * tool loop (McpToolLoop) works on the operation's own body and answer, so the executor
 * below it routes and translates to any provider as for any other request. Each dialect
 * has its ToolDialect in its own folder (`CHAT_TOOLS` in chat/chat-dialect.ts, …).
 */

/** An MCP tool as the model sees it: `name` is what the model calls (`{slug}__{tool}`, made safe for every vendor). */
export interface OfferedTool {
  name: string;
  server: string;
  tool: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** A tool call in a model's answer; `arguments` parsed (`argumentsError` when they were not JSON). */
export interface ModelToolCall {
  id: string;
  name: string;
  arguments: unknown;
  argumentsError?: string;
}

/** A call's result as the model reads it on the next round. */
export interface ToolResultText {
  call: ModelToolCall;
  text: string;
  isError: boolean;
}

export type Body = Record<string, unknown>;

export interface ToolDialect {
  /** The names of the client's own function tools (an MCP tool may not take one of them). */
  clientToolNames(body: Body): string[];
  /** The body with the MCP tools added after the client's. */
  withTools(body: Body, tools: OfferedTool[]): Body;
  /** Every tool call in an answer, in order. */
  toolCalls(answer: unknown): ModelToolCall[];
  /** The next round's body: the conversation so far, the model's turn and the results. */
  continued(body: Body, answer: unknown, results: ToolResultText[]): Body;
  /** The answer without the calls `ids` (MCP calls left out of an answer that goes back to the client). */
  withoutCalls(answer: unknown, ids: ReadonlySet<string>): unknown;
  /** The answer as the operation's SSE frames, for a stream whose answer the gateway changed. */
  frames(answer: unknown, body: Body): string[];
}

export const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
export const records = (value: unknown): Body[] => list(value).filter(isObject);
export const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Parses a JSON arguments string; the model's malformed JSON becomes an error result it can correct. */
export function parsedArguments(raw: unknown): Pick<ModelToolCall, 'arguments' | 'argumentsError'> {
  if (isObject(raw)) return { arguments: raw };
  if (typeof raw !== 'string' || raw.trim() === '') return { arguments: {} };
  try {
    return { arguments: JSON.parse(raw) as unknown };
  } catch {
    return { arguments: raw, argumentsError: `The arguments are not valid JSON: ${raw.slice(0, 200)}` };
  }
}

/**
 * `{slug}__{tool}`, in the characters and length every vendor accepts for a tool name
 * (`^[a-zA-Z0-9_-]{1,64}$`); a longer one keeps a hash of the whole so names stay apart.
 */
export function modelToolName(slug: string, tool: string): string {
  const name = `${slug}__${tool}`.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (name.length <= 64) return name;
  return `${name.slice(0, 55)}_${createHash('sha256').update(`${slug}\0${tool}`).digest('hex').slice(0, 8)}`;
}

/** What the model reads of a result: its text blocks; other blocks named; structured content when there is no text. */
export function resultText(result: Pick<McpCallResult, 'content' | 'structuredContent'>): string {
  const parts = result.content.map((block) => {
    if (block.type === 'text' && typeof block.text === 'string') return block.text;
    if (block.type === 'resource' && typeof block.resource === 'object' && block.resource !== null) {
      const resource = block.resource as Record<string, unknown>;
      return typeof resource.text === 'string' ? resource.text : `[resource ${String(resource.uri)}]`;
    }
    if (block.type === 'resource_link') return `[resource ${String(block.uri)}]`;
    return `[${String(block.type)}${typeof block.mimeType === 'string' ? ` ${block.mimeType}` : ''}]`;
  });
  if (!parts.length && result.structuredContent) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}
