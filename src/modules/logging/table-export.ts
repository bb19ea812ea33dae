import type { Response } from 'express';

export const EXPORT_FORMATS = ['csv', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/**
 * Writes rows as a download, batch by batch as `batches` yields them, waiting for the
 * socket to drain between batches: a large export never sits whole in memory, and a slow
 * client slows the reading down. CSV takes its columns from `columns`; values that are
 * objects go in as JSON, and a cell a spreadsheet would run as a formula (`=`, `+`, `-`,
 * `@` first) is quoted with a leading `'`. JSON is one array. A failure after the first
 * bytes cuts the connection, so that a broken export cannot pass for a complete file.
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
  let first = true;
  try {
    const iterator = batches[Symbol.asyncIterator]();
    let next = await iterator.next(); // a failure here (bad filter, database down) is still an error answer
    await write(res, format === 'csv' ? `${columns.map(csvCell).join(',')}\r\n` : '[');
    for (; !next.done; next = await iterator.next()) {
      const text = next.value
        .map((row) => {
          const line = format === 'csv' ? columns.map((column) => csvCell(row[column])).join(',') + '\r\n' : `${first ? '\n' : ',\n'}${JSON.stringify(row)}`;
          first = false;
          return line;
        })
        .join('');
      if (text) await write(res, text);
      if (res.destroyed) return; // the client left
    }
    res.end(format === 'csv' ? '' : first ? ']\n' : '\n]\n');
  } catch (error) {
    if (!res.headersSent) {
      res.removeHeader('content-disposition');
      throw error;
    }
    res.destroy(error as Error);
  }
}

function write(res: Response, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (res.write(text)) resolve();
    else {
      const done = () => {
        res.off('drain', done).off('close', done);
        resolve();
      };
      res.on('drain', done).on('close', done);
    }
  });
}

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (/^[=+\-@\t\r]/.test(text) && typeof value === 'string') text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
