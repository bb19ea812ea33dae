import { MigrationInterface, QueryRunner } from 'typeorm';

/** How much a GIN index of the log collects before merging it into its tree (kB): see LogSearchWords. */
export const GIN_PENDING_LIST_KB = 128;

/**
 * The words of a body part, for search, and smaller GIN pending lists.
 *
 * - `log_body_words(body)` indexes the part's string values, not its JSON text: the text
 *   had JSON's escapes in it, so a word after a newline or a tab was indexed as `nimport` or
 *   `tfoo` and a search for `import` missed it, and the keys (`role`, `content`, `type`) were
 *   indexed in every part. A part over 100,000 characters of JSON is indexed by its first
 *   100,000 as before (its escapes read as spaces): a tsvector has a 1 MB limit. The index is
 *   built again here (on a large log this holds part inserts back for one read of the
 *   parts; the log writer keeps its records in the journal meanwhile). Parts whose body is
 *   in an object store keep the `document` they were written with.
 * - Every GIN index of the log merges its pending list at 128 kB instead of the server's
 *   default of 4 MB: each part's words and each row's part hashes first go to a list that
 *   every search reads through from start to end, and that PostgreSQL sizes at its
 *   largest (4 MB per index, or about 6 KB a request on a log of a few thousand requests
 *   an hour). A partitioned index takes no storage setting, so the setting goes on each
 *   partition's index, by `request_logs_create_partition` for the partitions to come.
 */
export class LogSearchWords1764002500000 implements MigrationInterface {
  name = 'LogSearchWords1764002500000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create function log_body_words(body jsonb) returns tsvector
      language sql immutable parallel safe
      as $$ select case when length(body::text) <= 100000
        then jsonb_to_tsvector('simple'::regconfig, body, '["string"]')
        else to_tsvector('simple'::regconfig, regexp_replace(left(body::text, 100000), '\\\\[nrtbf"\\\\/]', ' ', 'g')) end $$`);
    await db.query(
      `create index log_body_parts_words on log_body_parts using gin (log_body_words(body)) with (gin_pending_list_limit = ${GIN_PENDING_LIST_KB})`,
    );
    await db.query(`drop index log_body_parts_search`);
    await db.query(`drop function log_body_part_document(jsonb)`);
    await db.query(`alter index log_body_parts_document set (gin_pending_list_limit = ${GIN_PENDING_LIST_KB})`);
    await db.query(`
      create function request_logs_gin_settings(partition regclass) returns void language plpgsql as $$
      declare index_name regclass;
      begin
        for index_name in
          select i.indexrelid::regclass from pg_index i join pg_class c on c.oid = i.indexrelid join pg_am am on am.oid = c.relam
          where i.indrelid = partition and am.amname = 'gin'
        loop
          execute format('alter index %s set (gin_pending_list_limit = ${GIN_PENDING_LIST_KB})', index_name);
        end loop;
      end $$`);
    await db.query(`select request_logs_gin_settings(inhrelid::regclass) from pg_inherits where inhparent = 'request_logs'::regclass`);
    await db.query(`
      create or replace function request_logs_create_partition(day date) returns boolean language plpgsql as $$
      declare
        partition text := 'request_logs_p' || to_char(day, 'YYYYMMDD');
        lower timestamptz := day::timestamp at time zone 'UTC';
        upper timestamptz := (day + 1)::timestamp at time zone 'UTC';
      begin
        if to_regclass(partition) is not null then return false; end if;
        execute format('create table %I (like request_logs including defaults including constraints)', partition);
        -- The default partition may not keep rows of the new bound (ATTACH checks); statements
        -- on partitions fire no trigger of the log, so the rollups are not touched by the move.
        execute format('with moved as (delete from request_logs_default where created_at >= $1 and created_at < $2 returning *) insert into %I select * from moved', partition)
          using lower, upper;
        execute format('alter table request_logs attach partition %I for values from (%L) to (%L)', partition, lower, upper);
        perform request_logs_gin_settings(partition::regclass);
        return true;
      end $$`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`
      create or replace function request_logs_create_partition(day date) returns boolean language plpgsql as $$
      declare
        partition text := 'request_logs_p' || to_char(day, 'YYYYMMDD');
        lower timestamptz := day::timestamp at time zone 'UTC';
        upper timestamptz := (day + 1)::timestamp at time zone 'UTC';
      begin
        if to_regclass(partition) is not null then return false; end if;
        execute format('create table %I (like request_logs including defaults including constraints)', partition);
        execute format('with moved as (delete from request_logs_default where created_at >= $1 and created_at < $2 returning *) insert into %I select * from moved', partition)
          using lower, upper;
        execute format('alter table request_logs attach partition %I for values from (%L) to (%L)', partition, lower, upper);
        return true;
      end $$`);
    await db.query(`drop function request_logs_gin_settings(regclass)`);
    await db.query(`
      create function log_body_part_document(body jsonb) returns tsvector
      language sql immutable parallel safe
      as $$ select to_tsvector('simple'::regconfig, left(coalesce(body::text, ''), 100000)) $$`);
    await db.query(`create index log_body_parts_search on log_body_parts using gin (log_body_part_document(body))`);
    await db.query(`drop index log_body_parts_words`);
    await db.query(`drop function log_body_words(jsonb)`);
  }
}
