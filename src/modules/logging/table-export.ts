import type { Response } from 'express';
import { ClientStreamWriter, clientStreamLimitsOf, type StreamFlow } from '../../common/http/client-stream';

export const EXPORT_FORMATS = ['csv', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/**
 * A batch is written in pieces of about this many characters: the idle watch sees the
 * client's reading piece by piece (a write counts as read once all of it went out, so a
 * batch of many MiB written whole would make a slow but steady reader look idle).
 */
const PIECE_CHARS = 64 * 1024;

/**
 * Writes rows as a download, batch by batch as `batches` yields them: a large export never
 * sits whole in memory. The writing goes through a ClientStreamWriter (CONTRACT section 15):
 * once the client is STREAM_CLIENT_BUFFER_BYTES behind, the next batch is not read until it
 * has caught up, and a client that is behind and reads nothing for STREAM_CLIENT_IDLE_MS is
 * disconnected and the reading given up (the batches' generator closed), so an unread
 * export holds no query, connection or batch for longer than that. CSV takes its columns
 * from `columns`; values that are objects go in as JSON, and a cell a spreadsheet would run
 * as a formula (`=`, `+`, `-`, `@` first) is quoted with a leading `'`. JSON is one array.
 * A failure after the first bytes cuts the connection, so that a broken export cannot pass
 * for a complete file.
 */
export async function sendTable(
  res: Response,
  format: ExportFormat,
  filename: string,
  columns: readonly string[],
  batches: AsyncIterable<Record<string, unknown>[]>,
): Promise<void> {
  res.status(200);
  res.setHeader('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8');
  res.setHeader('content-disposition', `attachment; filename="${filename}.${format}"`);
  res.setHeader('cache-control', 'no-store');
  const iterator = batches[Symbol.asyncIterator]();
  let done = false;
  let first = true;
  try {
    let next = await iterator.next(); // a failure here (bad filter, database down) is still an error answer
    const gate = new BatchGate();
    const writer = new ClientStreamWriter(res, gate, clientStreamLimitsOf(res), () => res.destroy());
    res.once('close', () => gate.resume()); // a client gone (or cut) frees the loop below, which then stops
    writer.write(format === 'csv' ? `${columns.map(csvCell).join(',')}\r\n` : '[');
    for (; !next.done; next = await iterator.next()) {
      let piece = '';
      for (const row of next.value) {
        piece += format === 'csv' ? columns.map((column) => csvCell(row[column])).join(',') + '\r\n' : `${first ? '\n' : ',\n'}${JSON.stringify(row)}`;
        first = false;
        if (piece.length >= PIECE_CHARS) {
          writer.write(piece);
          piece = '';
        }
      }
      if (piece) writer.write(piece);
      await gate.passable();
      if (res.destroyed) return; // the client left, or was cut for reading nothing
    }
    done = true;
    if (format === 'json') writer.write(first ? ']\n' : '\n]\n');
    writer.end();
  } catch (error) {
    done = true; // a generator that threw is finished
    if (!res.headersSent) {
      res.removeHeader('content-disposition');
      throw error;
    }
    res.destroy(error as Error);
  } finally {
    // Given up before the end: the generator's own cleanup runs (no further query is made).
    if (!done) await iterator.return?.();
  }
}

/** The reading side of an export, as the ClientStreamWriter sees it: paused while the client is behind, and the next batch waits for it. */
class BatchGate implements StreamFlow {
  private opened: Promise<void> | null = null;
  private open: (() => void) | null = null;

  pause(): void {
    this.opened ??= new Promise((resolve) => (this.open = resolve));
  }

  resume(): void {
    this.open?.();
    this.opened = this.open = null;
  }

  /** Resolves at once, or once the client has caught up (or gone). */
  passable(): Promise<void> {
    return this.opened ?? Promise.resolve();
  }
}

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (/^[=+\-@\t\r]/.test(text) && typeof value === 'string') text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
