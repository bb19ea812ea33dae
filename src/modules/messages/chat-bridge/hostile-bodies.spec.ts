import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GatewayError } from '../../../common/errors/gateway-error';
import { toAnthropicRequest } from '../../../providers/anthropic/chat-request';
import { toConverseRequest } from '../../../providers/bedrock/converse-request';
import { toGeminiRequest } from '../../../providers/google/chat-request';
import { messagesToChatBody } from './messages-to-chat';

/** Claude Code's second recorded request (a tool round trip), the richest body there is. */
const CLAUDE_CODE = JSON.parse(readFileSync(join(__dirname, '../../../../test/fixtures/clients/claude-code-tool.json'), 'utf8')).requests[1].body;
const HOSTILE: unknown[] = [null, 7, 'x', '', [], {}, true, [null], [{}], { type: 7 }];

/** Every path of an object down to `depth` levels (not into JSON schemas, which pass as they are). */
function paths(value: unknown, depth: number, prefix: (string | number)[] = []): (string | number)[][] {
  if (depth === 0 || typeof value !== 'object' || value === null) return [];
  const keys = Array.isArray(value) ? value.map((_, i) => i).slice(0, 4) : Object.keys(value).filter((key) => key !== 'input_schema');
  return keys.flatMap((key) => [[...prefix, key], ...paths((value as any)[key], depth - 1, [...prefix, key])]);
}

function withValue(body: unknown, path: (string | number)[], replacement: unknown): Record<string, unknown> {
  const copy = structuredClone(body) as any;
  let holder = copy;
  for (const key of path.slice(0, -1)) holder = holder[key];
  holder[path[path.length - 1]] = replacement;
  return copy;
}

/** A translation either translates or answers a 400 GatewayError: never a TypeError (a 500). */
function expectTranslatedOr400(translate: () => unknown, what: string): unknown {
  try {
    return translate();
  } catch (error) {
    if (!(error instanceof GatewayError) || error.status !== 400) throw new Error(`${what}: ${(error as Error).stack}`);
    return undefined;
  }
}

/** An OpenAI chat body with each kind of message and part the chat translations read. */
const CHAT = {
  model: 'm',
  messages: [
    { role: 'system', content: 'Be brief.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Hi' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
      ],
    },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'r' }] },
    { role: 'system', content: 'Later note.' },
  ],
  tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: true } }],
  tool_choice: { type: 'function', function: { name: 'f' } },
  reasoning_effort: 'low',
  stop: ['x'],
  response_format: { type: 'text' },
  max_completion_tokens: 100,
  stream: true,
};

describe('hostile variations of a real Claude Code body', () => {
  it('each field of a chat body replaced by a wrong type is translated or a 400, for Gemini and Anthropic', () => {
    for (const path of paths(CHAT, 6)) {
      for (const replacement of HOSTILE) {
        const body = withValue(CHAT, path, replacement);
        const what = `${path.join('.')} = ${JSON.stringify(replacement)}`;
        expectTranslatedOr400(() => toGeminiRequest(body), `gemini: ${what}`);
        expectTranslatedOr400(() => toAnthropicRequest(body), `anthropic: ${what}`);
        expectTranslatedOr400(() => toConverseRequest(body), `bedrock: ${what}`);
      }
    }
  });

  it('each field replaced by a wrong type is translated or a 400, through the bridge and on to Gemini and Anthropic', () => {
    const variations = paths(CLAUDE_CODE, 5);
    expect(variations.length).toBeGreaterThan(50);
    let refused = 0;
    for (const path of variations) {
      for (const replacement of HOSTILE) {
        const what = `${path.join('.')} = ${JSON.stringify(replacement)}`;
        const chat = expectTranslatedOr400(() => messagesToChatBody(withValue(CLAUDE_CODE, path, replacement), 'google'), what) as
          Record<string, unknown> | undefined;
        if (!chat) {
          refused++;
          continue;
        }
        expectTranslatedOr400(() => toGeminiRequest(chat), `gemini after ${what}`);
        expectTranslatedOr400(() => toAnthropicRequest(chat), `anthropic after ${what}`);
        expectTranslatedOr400(() => toConverseRequest(chat), `bedrock after ${what}`);
      }
    }
    expect(refused).toBeGreaterThan(0);
  });
});
