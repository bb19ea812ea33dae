import { DEFAULT_WORKSPACE_ID } from '../../workspaces/workspace.entity';

/** A record's workspace in SQL over json_to_recordset (alias `r`): a journal written before workspaces replays rows without one. */
export const RECORD_WORKSPACE_SQL = `coalesce(r."workspaceId", '${DEFAULT_WORKSPACE_ID}')`;

/**
 * The `parts` step of a statement that stores log records (LogWriter) or rewrites old rows
 * (LogBodyBackfill): the parts the records carry in `bodyParts` (record-parts.ts: `h` key,
 * `n` bytes, `b` JSON), each once, in the order of the table's key (two instances storing
 * the same parts take their locks in the same order). A part stored before gets the row's
 * day as its last_seen_day when that is later (retention reads it).
 *
 * `records`: the SQL of a JSON array of records (a parameter). `bodiesInDatabase`: false
 * when the parts' bodies live in object storage (PartStore): the row then keeps only the
 * part's words for search (`document`), not its body.
 */
export function partsUpsertStep(records: string, bodiesInDatabase: boolean): string {
  const [body, document] = bodiesInDatabase ? ['p.b', 'null::tsvector'] : ['null::jsonb', 'log_body_words(p.b)'];
  return `parts as (
      insert into log_body_parts (workspace_id, hash, body, document, bytes, last_seen_day)
      select distinct on (1, 2) ${RECORD_WORKSPACE_SQL}, p.h, ${body}, ${document}, p.n, (r."createdAt" at time zone 'UTC')::date
      from json_to_recordset(${records}::json) as r("workspaceId" uuid, "createdAt" timestamptz, "bodyParts" json)
      cross join lateral json_to_recordset(r."bodyParts") as p(h uuid, n integer, b jsonb)
      order by 1, 2, 6 desc
      on conflict (workspace_id, hash) do update set last_seen_day = excluded.last_seen_day where log_body_parts.last_seen_day < excluded.last_seen_day)`;
}
