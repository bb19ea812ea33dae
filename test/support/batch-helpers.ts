/** What the batch suites share: JSONL input files, chat lines, waiting for a batch to end, reading its files. */
import Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { waitFor } from './e2e-helpers';
import type { TestGateway } from './test-gateway';

/** The lines as a JSONL file (a string line is written as it is: a malformed one). */
export const jsonl = (lines: unknown[]) => lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n';

/** A chat completions line whose answer is `text` (the mock echoes "echo: …"). */
export const chatLine = (customId: string, text: string, model = 'gpt-4o-mini') => ({
  custom_id: customId,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model, messages: [{ role: 'user', content: `echo: ${text}` }] },
});

/** The batch once it has ended (completed, failed, expired or cancelled). */
export async function finished(client: OpenAI, id: string, timeoutMs = 15_000): Promise<OpenAI.Batch> {
  return waitFor(async () => {
    const batch = await client.batches.retrieve(id);
    return ['completed', 'failed', 'expired', 'cancelled'].includes(batch.status) ? batch : null;
  }, timeoutMs);
}

/** A batch's output or error file, one parsed object per line (none without a file). */
export async function fileLines(client: OpenAI, id: string | null | undefined): Promise<any[]> {
  if (!id) return [];
  const text = await (await client.files.content(id)).text();
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** The Anthropic SDK against the gateway, with these routing headers. */
export function anthropicClient(gateway: TestGateway, headers: Record<string, string>): Anthropic {
  return new Anthropic({ baseURL: gateway.url, apiKey: gateway.adminKey, maxRetries: 0, defaultHeaders: headers });
}

/** Two Messages requests answering "one" and "two", and one without max_tokens (an errored result). */
export const MESSAGE_REQUESTS: Anthropic.Messages.BatchCreateParams.Request[] = [
  { custom_id: 'first', params: { model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'echo: one' }] } },
  { custom_id: 'second', params: { model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'echo: two' }] } },
  {
    custom_id: 'broken',
    params: { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'no max_tokens' }] } as Anthropic.Messages.MessageCreateParamsNonStreaming,
  },
];

/** An Anthropic batch once it has ended. */
export async function ended(anthropic: Anthropic, id: string): Promise<Anthropic.Messages.MessageBatch> {
  return waitFor(async () => {
    const batch = await anthropic.messages.batches.retrieve(id);
    return batch.processing_status === 'ended' ? batch : null;
  }, 15_000);
}
