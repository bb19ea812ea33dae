import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { LineStatus } from './batch-lines';

/** A line as its results are written. */
interface ResultRow {
  line: number;
  custom_id: string;
  status: LineStatus;
  status_code: number | null;
  response: unknown;
  error: { code: string; message: string } | null;
  request_id: string | null;
  /** The provider's id of the result (a native batch's line), written back as it was. */
  result_id: string | null;
}

/** Lines read per query while a results file is written. */
const PAGE = 1000;

/** The statuses a line ends with in OpenAI's output file; every other ended line is in the error file. */
const OUTPUT: readonly LineStatus[] = ['succeeded'];
const ERRORS: readonly LineStatus[] = ['failed', 'errored', 'expired', 'cancelled'];

/**
 * A batch's results, written from its lines in their order, a page at a time (a batch of
 * 50,000 lines is never held whole): OpenAI's output and error files, Anthropic's results
 * JSONL. The shapes are the providers' own, so a native batch's results and a gateway-run
 * one's read the same.
 */
@Injectable()
export class BatchResults {
  constructor(private readonly db: DataSource) {}

  /** OpenAI's output file (lines that answered 2xx) or error file (the others), one JSON object per line. */
  async *openAiFile(batchId: string, kind: 'output' | 'error'): AsyncGenerator<Buffer> {
    for await (const row of this.rows(batchId, kind === 'output' ? OUTPUT : ERRORS)) {
      yield Buffer.from(`${JSON.stringify(openAiResultLine(batchId, row))}\n`);
    }
  }

  /** Anthropic's results: every ended line, `succeeded`, `errored`, `canceled` or `expired`. */
  async *anthropicResults(batchId: string): AsyncGenerator<Buffer> {
    for await (const row of this.rows(batchId, [...OUTPUT, ...ERRORS])) {
      yield Buffer.from(`${JSON.stringify(anthropicResultLine(row))}\n`);
    }
  }

  /** The bytes of each file, to say in its file object (counted once, when the batch ends). */
  async fileBytes(batchId: string): Promise<{ output: number; error: number }> {
    const bytes = { output: 0, error: 0 };
    for (const kind of ['output', 'error'] as const) {
      for await (const chunk of this.openAiFile(batchId, kind)) bytes[kind] += chunk.length;
    }
    return bytes;
  }

  private async *rows(batchId: string, statuses: readonly LineStatus[]): AsyncGenerator<ResultRow> {
    let after = -1;
    for (;;) {
      const rows = await this.db.query<ResultRow[]>(
        `select line, custom_id, status, status_code, response, error, request_id, result_id from batch_lines
         where batch_id = $1 and line > $2 and status = any($3) order by line limit ${PAGE}`,
        [batchId, after, statuses],
      );
      yield* rows;
      if (rows.length < PAGE) return;
      after = rows[rows.length - 1].line;
    }
  }
}

/** One line of OpenAI's output or error file: a request that answered has its `response`; one that never ran, an `error`. */
export function openAiResultLine(batchId: string, row: ResultRow): Record<string, unknown> {
  return {
    id: row.result_id ?? `batch_req_${batchId.slice(batchId.indexOf('_') + 1, batchId.indexOf('_') + 17)}${row.line.toString(16).padStart(8, '0')}`,
    custom_id: row.custom_id,
    response: row.status_code === null ? null : { status_code: row.status_code, request_id: row.request_id, body: row.response },
    error: row.status_code === null ? (row.error ?? { code: row.status, message: `The line was ${row.status}` }) : null,
  };
}

/** One line of Anthropic's results. */
export function anthropicResultLine(row: ResultRow): Record<string, unknown> {
  const type = row.status === 'succeeded' ? 'succeeded' : row.status === 'expired' ? 'expired' : row.status === 'cancelled' ? 'canceled' : 'errored';
  if (type === 'succeeded') return { custom_id: row.custom_id, result: { type, message: row.response } };
  if (type !== 'errored') return { custom_id: row.custom_id, result: { type } };
  const body = row.response as { type?: string; error?: { type?: string; message?: string } } | null;
  // The gateway's answer on /v1/messages is already Anthropic's error shape; a line that never ran says why in the same shape.
  const error =
    body?.type === 'error' && body.error
      ? body
      : { type: 'error', error: { type: errorTypeOf(row), message: row.error?.message ?? body?.error?.message ?? `The request failed (${row.status_code})` } };
  return { custom_id: row.custom_id, result: { type, error } };
}

function errorTypeOf(row: ResultRow): string {
  if (row.error?.code === 'invalid_line') return 'invalid_request_error';
  if (row.error?.code === 'budget_exceeded') return 'billing_error';
  return 'api_error';
}
