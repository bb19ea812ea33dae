import type { DataSource, QueryRunner } from 'typeorm';

/**
 * Runs `pass` on a connection of its own holding the session advisory lock `lockKey`, with
 * `lockTimeout` (e.g. '500ms') for the locks its statements wait for, so that background
 * work (log maintenance, the body backfill) runs on one instance at a time and never queues
 * long behind the log writer. Null, without running it, when another instance holds the lock.
 */
export async function exclusivePass<T>(dataSource: DataSource, lockKey: number, lockTimeout: string, pass: (db: QueryRunner) => Promise<T>): Promise<T | null> {
  const db = dataSource.createQueryRunner();
  await db.connect();
  try {
    const [{ locked }] = await db.query('select pg_try_advisory_lock($1) as locked', [lockKey]);
    if (!locked) return null;
    try {
      await db.query(`set lock_timeout = '${lockTimeout}'`);
      return await pass(db);
    } finally {
      await db.query('reset lock_timeout');
      await db.query('select pg_advisory_unlock($1)', [lockKey]);
    }
  } finally {
    await db.release();
  }
}
