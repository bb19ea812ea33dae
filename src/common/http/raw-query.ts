import type { Request } from 'express';

/** The query string as the client sent it, passed on to the provider (`after`, `limit`, `include[]` …). */
export function rawQuery(req: Request): string {
  const q = req.originalUrl.indexOf('?');
  return q === -1 ? '' : req.originalUrl.slice(q + 1);
}
