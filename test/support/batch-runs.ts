/** Batches through the gateway with the official `openai` SDK, for the suites that need one run to its end. */
import type OpenAI from 'openai';
import { toFile } from 'openai';
import { waitFor } from './e2e-helpers';

/** A batch's statuses once it has ended. */
export const ENDED_STATUSES = ['completed', 'failed', 'expired', 'cancelled'];

/** JSONL of the lines (a string is written as it is: a line that is not JSON). */
export const jsonl = (lines: unknown[]) => lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n';

/** A line of an OpenAI-shaped batch: a chat completion the mock answers with `text` (`echo:`). */
export const chatLine = (customId: string, text: string, model = 'llama-3.1-8b-instant') => ({
  custom_id: customId,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model, messages: [{ role: 'user', content: `echo: ${text}` }] },
});

/** Uploads the lines and creates an OpenAI-shaped batch of them (a 24-hour window). */
export async function createBatch(client: OpenAI, lines: unknown[], metadata?: Record<string, string>): Promise<OpenAI.Batch> {
  const file = await client.files.create({ file: await toFile(Buffer.from(jsonl(lines)), 'lines.jsonl'), purpose: 'batch' });
  return client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata });
}

/** The batch once it has ended, polled through the SDK. */
export function batchEnded(client: OpenAI, id: string, timeoutMs = 20_000): Promise<OpenAI.Batch> {
  return waitFor(async () => {
    const batch = await client.batches.retrieve(id);
    return ENDED_STATUSES.includes(batch.status) ? batch : null;
  }, timeoutMs);
}

/** Creates a batch of the lines and waits for its end. */
export async function runBatch(client: OpenAI, lines: unknown[], metadata?: Record<string, string>): Promise<OpenAI.Batch> {
  return batchEnded(client, (await createBatch(client, lines, metadata)).id);
}
