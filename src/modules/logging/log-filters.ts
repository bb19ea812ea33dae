import type { SelectQueryBuilder } from 'typeorm';
import type { RequestLogEntity } from './entities/request-log.entity';
import type { LogQueryDto } from './dto/log-query.dto';

/** Comma-separated values of a multi-value filter, blanks dropped. */
export function valuesOf(filter: string): string[] {
  return filter
    .split(',')
    .map((value) => value.trim())
    .filter(Boolean);
}

/**
 * The log list's search filters (issue 25), added to `qb` (alias `log`): several values
 * of a column (`model=a,b`), a part of the model name (`model_contains`), status codes and
 * classes, and a full-text search `q` over the request and response bodies through the
 * `request_log_document` index (migration LogSearch; the query repeats the indexed
 * expression exactly, so that the index is used).
 */
export function applySearchFilters(qb: SelectQueryBuilder<RequestLogEntity>, query: LogQueryDto): void {
  for (const [column, filter] of [['model', query.model], ['provider', query.provider], ['operation', query.operation], ['end_user', query.user]] as const) {
    if (filter === undefined) continue;
    const values = valuesOf(filter);
    qb.andWhere(`log.${column} in (:...${column}Values)`, { [`${column}Values`]: values.length ? values : [filter] });
  }
  if (query.model_contains) qb.andWhere(`log.model ilike :modelPart escape '\\'`, { modelPart: `%${query.model_contains.replace(/[\\%_]/g, (c) => `\\${c}`)}%` });
  if (query.status) {
    const conditions = valuesOf(query.status).map((status, i) => {
      if (status === 'error') return 'log.status_code >= 400';
      if (status.endsWith('xx')) return `log.status_code between ${Number(status[0]) * 100} and ${Number(status[0]) * 100 + 99}`;
      qb.setParameter(`status${i}`, Number(status));
      return `log.status_code = :status${i}`;
    });
    qb.andWhere(`(${conditions.join(' or ')})`);
  }
  if (query.q) qb.andWhere(`request_log_document(log.request_body, log.response_body) @@ websearch_to_tsquery('simple', :search)`, { search: query.q });
}
