import { MigrationInterface, QueryRunner } from 'typeorm';

/** Days after today whose partitions the migration makes (LogPartitionMaintainer keeps as many ahead). */
const DAYS_AHEAD = 3;

/**
 * The request log partitioned by UTC day (range on `created_at`), so that retention drops
 * whole days (LOG_RETENTION_DAYS, LogPartitionMaintainer) instead of deleting rows.
 *
 * - Primary key `(id, created_at)`: a unique key of a partitioned table must hold its
 *   partition key. The log writer's idempotent insert is `on conflict (id, created_at)`:
 *   a replayed record carries the created_at it was first written with.
 * - Partitions `request_logs_pYYYYMMDD` of one UTC day each, and `request_logs_default` for
 *   a row whose day has no partition yet (made late, clock skew): it is stored, never refused,
 *   and moved to its day's partition when that is made.
 * - `request_logs_create_partition(day)` makes a day's partition, used here and by the
 *   maintainer: a table of its own, filled with the default partition's rows of that day,
 *   then attached (ATTACH takes SHARE UPDATE EXCLUSIVE on the log, so inserts and reads go on;
 *   CREATE TABLE ... PARTITION OF would take ACCESS EXCLUSIVE).
 *
 * The rows are copied into the partitioned table before its indexes and triggers exist
 * (faster; and the rollups, which already count them, are not fed them again); then every
 * index and trigger the table had is made again from its definition. The whole migration
 * holds the log locked: the log writer keeps the rows in its journal meanwhile.
 */
export class PartitionRequestLogs1764001500000 implements MigrationInterface {
  name = 'PartitionRequestLogs1764001500000';

  async up(db: QueryRunner): Promise<void> {
    await db.query('lock table request_logs in access exclusive mode');
    const { indexes, triggers } = await definitionsOf(db);
    await db.query('alter table request_logs rename to request_logs_unpartitioned');
    await db.query('create table request_logs (like request_logs_unpartitioned including defaults including constraints) partition by range (created_at)');
    await db.query('create table request_logs_default partition of request_logs default');
    await db.query(`
      create function request_logs_create_partition(day date) returns boolean language plpgsql as $$
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
        return true;
      end $$`);
    await db.query(
      `select request_logs_create_partition(day)
       from (select distinct (created_at at time zone 'UTC')::date as day from request_logs_unpartitioned
             union select (now() at time zone 'UTC')::date + generate_series(0, ${DAYS_AHEAD})) as days
       order by day`,
    );
    await db.query('insert into request_logs select * from request_logs_unpartitioned');
    await db.query('drop table request_logs_unpartitioned');
    await db.query('alter table request_logs add constraint request_logs_pkey primary key (id, created_at)');
    for (const sql of [...indexes, ...triggers]) await db.query(sql);
    await db.query('analyze request_logs');
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('lock table request_logs in access exclusive mode');
    const { indexes, triggers } = await definitionsOf(db);
    await db.query('alter table request_logs rename to request_logs_partitioned');
    await db.query('create table request_logs (like request_logs_partitioned including defaults including constraints)');
    await db.query('insert into request_logs select * from request_logs_partitioned');
    await db.query('drop table request_logs_partitioned');
    await db.query('drop function request_logs_create_partition(date)');
    await db.query('alter table request_logs add constraint request_logs_pkey primary key (id)');
    for (const sql of [...indexes, ...triggers]) await db.query(sql);
    await db.query('analyze request_logs');
  }
}

/**
 * The statements that make the log's indexes (its primary key apart) and triggers again,
 * read from the table itself: whatever earlier migrations gave it is kept. A partitioned
 * table's index is printed `ON ONLY`, which would not build it on the partitions.
 */
async function definitionsOf(db: QueryRunner): Promise<{ indexes: string[]; triggers: string[] }> {
  const indexes: { sql: string }[] = await db.query(
    `select pg_get_indexdef(i.indexrelid) as sql from pg_index i
     where i.indrelid = 'request_logs'::regclass and not i.indisprimary order by i.indexrelid`,
  );
  const triggers: { sql: string }[] = await db.query(
    `select pg_get_triggerdef(t.oid) as sql from pg_trigger t
     where t.tgrelid = 'request_logs'::regclass and not t.tgisinternal and t.tgparentid = 0 order by t.tgname`,
  );
  return { indexes: indexes.map(({ sql }) => sql.replace(' ON ONLY ', ' ON ')), triggers: triggers.map(({ sql }) => sql) };
}
