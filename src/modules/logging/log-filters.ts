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
 * A full-text search `q` as the terms a row must have and those it must not (see
 * applySearchFilters), from PostgreSQL's own reading of `q` (SEARCH_PLAN_SQL): the query
 * cut at its top-level ANDs. A row matches a term when its own text or one of its parts
 * does, so `refund policy` finds a row with "refund" in a message and "policy" in the
 * system prompt; a phrase, or an OR, is matched within one part.
 */
export interface SearchPlan {
  /** tsquery texts (cast, not parsed again: a lexeme stays as PostgreSQL made it), each matched by the row's text or one of its parts. */
  required: string[];
  /** tsquery texts that neither the row's text nor any of its parts may match. */
  excluded: string[];
}

/** `$1` the search text: the query as PostgreSQL reads it (`'a' <-> 'b' & !'c'`). */
export const SEARCH_PLAN_SQL = `select websearch_to_tsquery('simple', $1)::text as query`;

/**
 * Every word of the query matches as a prefix (`'refund':*`): "refund" finds "refunds" and
 * "refunded", as people expect of a search box (the word indexes take prefix queries).
 */
export function withPrefixes(query: string): string {
  // Each lexeme with its marks, consumed whole, so no quote inside one starts another.
  return query.replace(/'(?:[^']|'')*'(:[*A-D]+)?/g, (lexeme, marks?: string) => (marks ? lexeme : `${lexeme}:*`));
}

export function searchPlan(query: string): SearchPlan {
  const plan: SearchPlan = { required: [], excluded: [] };
  for (const operand of topLevelOperands(withPrefixes(query))) {
    const negated = operand.startsWith('!') ? operand.slice(1).trim() : null;
    // `!'word'` or `!( … )` is an exclusion; a `!` that binds less than the whole operand stays in a term.
    if (negated !== null && isOneGroup(negated)) plan.excluded.push(negated);
    else plan.required.push(operand);
  }
  return plan;
}

/** One quoted lexeme (with its marks: `:*`), or one parenthesised group, and nothing else. */
function isOneGroup(text: string): boolean {
  if (/^'(?:[^']|'')*'(?::[*A-D]+)?$/.test(text)) return true;
  if (!text.startsWith('(')) return false;
  for (const { char, index, depth } of outsideQuotes(text)) if (char === ')' && depth === 0) return index === text.length - 1;
  return false;
}

/** The operands of a tsquery's text joined by `&` outside quotes and parentheses (the whole query when an OR joins them). */
function topLevelOperands(query: string): string[] {
  const operands: string[] = [];
  let start = 0;
  for (const { char, index, depth } of outsideQuotes(query)) {
    if (depth > 0) continue;
    if (char === '|') return [query.trim()].filter(Boolean); // & binds tighter: an OR of ANDs is one term
    if (char === '&') {
      operands.push(query.slice(start, index).trim());
      start = index + 1;
    }
  }
  operands.push(query.slice(start).trim());
  return operands.filter(Boolean);
}

/** The characters of a tsquery's text outside its quoted lexemes, each with the parenthesis depth it stands at (a parenthesis at its outer one). */
function* outsideQuotes(text: string): Generator<{ char: string; index: number; depth: number }> {
  let depth = 0;
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === "'") quoted = !quoted; // a doubled quote inside a lexeme toggles twice
    if (char === "'" || quoted) continue;
    if (char === ')') depth--;
    yield { char, index, depth };
    if (char === '(') depth++;
  }
}

/**
 * The log list's search filters (issue 25), added to `qb` (alias `log`): several values
 * of a column (`model=a,b`), a part of the model name (`model_contains`), status codes and
 * classes, and a full-text search `q` over the request and response bodies: a row matches
 * when its own body text does (`request_log_document`, migration LogSearch: the rest of a
 * body split into parts, a whole body before parts) or when one of its parts does
 * (`log_body_words`, migration LogSearchWords: each distinct part's string values indexed once; or,
 * for a part whose body is in an object store, its `document`, migration
 * LogBodyPartDocuments; the rows of the matching parts are found through the GIN index on
 * `part_hashes`). The
 * query repeats the indexed expressions exactly, so that the indexes are used.
 * `workspaces`: the workspaces whose parts may match (null: all).
 */
export function applySearchFilters(
  qb: SelectQueryBuilder<RequestLogEntity>,
  query: LogQueryDto,
  workspaces: readonly string[] | null,
  search?: SearchPlan,
): void {
  for (const [column, filter] of [
    ['model', query.model],
    ['provider', query.provider],
    ['operation', query.operation],
    ['end_user', query.user],
    ['kind', query.kind],
  ] as const) {
    if (filter === undefined) continue;
    const values = valuesOf(filter);
    qb.andWhere(`log.${column} in (:...${column}Values)`, { [`${column}Values`]: values.length ? values : [filter] });
  }
  if (query.model_contains)
    qb.andWhere(`log.model ilike :modelPart escape '\\'`, { modelPart: `%${query.model_contains.replace(/[\\%_]/g, (c) => `\\${c}`)}%` });
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
    qb.setParameters({ searchWorkspaces: workspaces });
    const inWorkspaces = workspaces === null ? '' : 'p.workspace_id in (:...searchWorkspaces) and ';
    const matches = (parameter: string) => `(request_log_document(log.request_body, log.response_body) @@ cast(:${parameter} as tsquery)
      or coalesce(log.part_hashes && array(select p.hash from log_body_parts p where ${inWorkspaces}(log_body_words(p.body) @@ cast(:${parameter} as tsquery)
        or p.document @@ cast(:${parameter} as tsquery))), false))`;
    search.required.forEach((term, i) => qb.andWhere(matches(`searchTerm${i}`), { [`searchTerm${i}`]: term }));
    // `matches` is never null (a row without parts: coalesce), so `not` keeps the rows that lack the term.
    search.excluded.forEach((term, i) => qb.andWhere(`not ${matches(`searchExcluded${i}`)}`, { [`searchExcluded${i}`]: term }));
    // Words PostgreSQL does not index (punctuation alone): no row matches, as before parts.
    if (search.required.length + search.excluded.length === 0) qb.andWhere('false');
  }
}
