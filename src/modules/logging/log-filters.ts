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
 * How a full-text search `q` reads a log row whose bodies are split into parts (see
 * applySearchFilters), from PostgreSQL's own reading of `q` (searchPlanQuery).
 */
export interface SearchPlan {
  /**
   * The query's positive terms joined by OR (`to_tsquery` text), which a matching row has
   * in its own text or in one of its parts: the index-served filter. Null when there is
   * none (`-word` alone): every row is a candidate.
   */
  anyTerm: string | null;
  /** The query combines terms (AND, NOT): a row's text and its parts must be read together. */
  wholeRow: boolean;
}

/** `$1` the search text: the query as PostgreSQL reads it, and its positive part. */
export const SEARCH_PLAN_SQL = `select websearch_to_tsquery('simple', $1)::text as query, querytree(websearch_to_tsquery('simple', $1)) as positive`;

export function searchPlan(row: { query: string; positive: string }): SearchPlan {
  const wholeRow = /[&!]/.test(row.query);
  const positive = row.positive === 'T' || row.positive === '' ? null : row.positive;
  return { anyTerm: positive && wholeRow ? positive.replace(/&|<\d*->/g, '|') : positive, wholeRow };
}

/**
 * The log list's search filters (issue 25), added to `qb` (alias `log`): several values
 * of a column (`model=a,b`), a part of the model name (`model_contains`), status codes and
 * classes, and a full-text search `q` over the request and response bodies: a row matches
 * when its own body text does (`request_log_document`, migration LogSearch: the rest of a
 * body split into parts, a whole body before parts) or when one of its parts does
 * (`log_body_part_document`, migration LogBodyParts: each distinct part indexed once; the
 * rows of the matching parts are found through the GIN index on `part_hashes`). The
 * query repeats the indexed expressions exactly, so that the indexes are used.
 * `workspaces`: the workspaces whose parts may match (null: all).
 */
export function applySearchFilters(qb: SelectQueryBuilder<RequestLogEntity>, query: LogQueryDto, workspaces: readonly string[] | null, search?: SearchPlan): void {
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
  if (query.q && search) {
    qb.setParameters({ search: query.q, searchAny: search.anyTerm, searchWorkspaces: workspaces });
    const inWorkspaces = workspaces === null ? '' : 'p.workspace_id in (:...searchWorkspaces) and ';
    const anyTerm = search.wholeRow ? `to_tsquery('simple', :searchAny)` : `websearch_to_tsquery('simple', :search)`;
    if (search.anyTerm !== null) {
      qb.andWhere(`(request_log_document(log.request_body, log.response_body) @@ ${anyTerm}
        or log.part_hashes && array(select p.hash from log_body_parts p where ${inWorkspaces}log_body_part_document(p.body) @@ ${anyTerm}))`);
    }
    if (search.wholeRow) {
      qb.andWhere(`(request_log_document(log.request_body, log.response_body) || coalesce((
          select log_tsvector_agg(log_body_part_document(p.body) order by h.ord)
          from unnest(log.part_hashes) with ordinality as h(hash, ord) join log_body_parts p on p.workspace_id = log.workspace_id and p.hash = h.hash
        ), ''::tsvector)) @@ websearch_to_tsquery('simple', :search)`);
    }
  }
}
