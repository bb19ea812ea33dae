import { DeleteObjectsCommand, GetObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { QueryRunner } from 'typeorm';
import type { Environment } from '../../../config/environment';

/** A part to store: its workspace, its key (body-parts.ts) and its JSON text after redaction. */
export interface PartToStore {
  workspaceId: string;
  hash: string;
  json: string;
}

/** A stored part's address: its workspace and its key. */
export type PartAddress = readonly [workspaceId: string, hash: string];

/** Requests to the object store in flight at once, per call (a batch of the writer, a page of an export). */
const OBJECT_STORE_CONCURRENCY = 16;
/** Keys per DeleteObjects request: S3's limit. */
const DELETE_BATCH = 1_000;

/**
 * Where the parts of logged bodies live (CONTRACT section 14). By default in PostgreSQL
 * (`log_body_parts.body`, written by the same statement as the rows: `inDatabase`, and
 * every method here does nothing). With `LOG_BODY_STORE=s3://bucket/prefix`, in an
 * S3-compatible object store, one object per part at `<prefix><workspace>/<hash>.json`;
 * PostgreSQL keeps the part's row (its key, size, last day seen and search words) for
 * retention and search.
 *
 * The object store and PostgreSQL are not one transaction, so writers and retention take
 * turns (PARTS_LOCK): the log writer and the backfill put a batch's parts and store its
 * rows holding the lock shared (putThenStore); retention deletes a batch of part rows and
 * their objects holding it exclusively (freeWith). A part retention frees is therefore
 * never one a row stored meanwhile refers to: a writer that needs it again puts it again
 * after the deletion.
 */
@Injectable()
export class PartStore implements OnModuleDestroy {
  private readonly logger = new Logger(PartStore.name);
  private readonly s3?: { client: S3Client; bucket: string; prefix: string };

  constructor(config: ConfigService<Environment, true>) {
    const location = config.get('LOG_BODY_STORE', { infer: true });
    if (!location) return;
    const { bucket, prefix } = parseStoreLocation(location);
    const endpoint = config.get('LOG_BODY_STORE_ENDPOINT', { infer: true });
    const client = new S3Client({
      region: process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
      // Without timeouts a store that stops answering would hold the log writer (and its journal) forever.
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000 },
      ...(endpoint && {
        endpoint,
        // S3-compatible servers address buckets by path, and many reject the checksums newer SDKs add by default.
        forcePathStyle: true,
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      }),
    });
    this.s3 = { client, bucket, prefix };
  }

  /** True when part bodies are stored in PostgreSQL (no LOG_BODY_STORE). */
  get inDatabase(): boolean {
    return this.s3 === undefined;
  }

  onModuleDestroy(): void {
    this.s3?.client.destroy();
  }

  /** Stores parts in the object store (before any row refers to them); throws when one could not be. */
  async put(parts: readonly PartToStore[]): Promise<void> {
    const s3 = this.s3;
    if (!s3 || parts.length === 0) return;
    const unique = [...new Map(parts.map((part) => [this.objectKey(part.workspaceId, part.hash), part])).entries()];
    await eachLimited(unique, async ([key, part]) => {
      await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: part.json, ContentType: 'application/json' }));
    });
  }

  /**
   * Puts `parts` in the object store, then runs `statement` (which stores the rows that
   * refer to them), in one transaction on `db` holding PARTS_LOCK shared: retention, which
   * deletes holding it exclusively, cannot delete a part between its put and its row.
   */
  async putThenStore<T>(db: QueryRunner, parts: readonly PartToStore[], statement: string, params: unknown[]): Promise<T> {
    await db.startTransaction();
    try {
      await db.query('select pg_advisory_xact_lock_shared($1)', [PARTS_LOCK]);
      await this.put(parts);
      const result = (await db.query(statement, params)) as T;
      await db.commitTransaction();
      return result;
    } catch (error) {
      await db.rollbackTransaction();
      throw error;
    }
  }

  /**
   * Runs `deleteStatement` (a DELETE of part rows RETURNING workspace_id, hash), then deletes
   * those parts' objects, in one transaction on `db` holding PARTS_LOCK exclusively: the rows
   * go only if their objects did. Answers how many parts were freed.
   */
  async freeWith(db: QueryRunner, deleteStatement: string, params: unknown[]): Promise<number> {
    await db.startTransaction();
    try {
      await db.query('select pg_advisory_xact_lock($1)', [PARTS_LOCK]);
      // TypeORM answers a DELETE with [rows, count].
      const [parts]: [{ workspace_id: string; hash: string }[], number] = await db.query(deleteStatement, params);
      await this.delete(parts.map((part) => [part.workspace_id, part.hash] as const));
      await db.commitTransaction();
      return parts.length;
    } catch (error) {
      await db.rollbackTransaction();
      throw error;
    }
  }

  /**
   * Reads parts from the object store, by `workspace/hash`. A part that is not there, or
   * that cannot be read now, is absent from the answer (the reader shows it as missing);
   * the store's failures are logged once per call, never thrown.
   */
  async get(addresses: readonly PartAddress[]): Promise<Map<string, unknown>> {
    const found = new Map<string, unknown>();
    const s3 = this.s3;
    if (!s3 || addresses.length === 0) return found;
    let failure: unknown;
    await eachLimited(addresses, async ([workspaceId, hash]) => {
      try {
        const object = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: this.objectKey(workspaceId, hash) }));
        found.set(`${workspaceId}/${hash}`, JSON.parse((await object.Body?.transformToString('utf8')) ?? 'null'));
      } catch (error) {
        if (!(error instanceof S3ServiceException && error.name === 'NoSuchKey')) failure ??= error;
      }
    });
    if (failure) this.logger.warn(`Reading log body parts from the object store failed; they show as missing: ${(failure as Error).message}`);
    return found;
  }

  /** Deletes parts' objects (a key already gone is not an error); throws when the store refused any. */
  async delete(addresses: readonly PartAddress[]): Promise<void> {
    const s3 = this.s3;
    if (!s3 || addresses.length === 0) return;
    for (let start = 0; start < addresses.length; start += DELETE_BATCH) {
      const objects = addresses.slice(start, start + DELETE_BATCH).map(([workspaceId, hash]) => ({ Key: this.objectKey(workspaceId, hash) }));
      const answer = await s3.client.send(new DeleteObjectsCommand({ Bucket: s3.bucket, Delete: { Objects: objects, Quiet: true } }));
      const refused = answer.Errors ?? [];
      if (refused.length)
        throw new Error(`the object store refused to delete ${refused.length} parts: ${refused[0].Code ?? ''} ${refused[0].Message ?? ''}`.trim());
    }
  }

  private objectKey(workspaceId: string, hash: string): string {
    return `${this.s3!.prefix}${workspaceId}/${hash}.json`;
  }
}

/** PostgreSQL advisory lock key taken by the writers (shared) and retention (exclusive) when parts are in an object store. */
const PARTS_LOCK = 7_305_118_004;

/** The bucket and key prefix of `s3://bucket/prefix` (validated by the environment); a non-empty prefix ends with `/`. */
export function parseStoreLocation(location: string): { bucket: string; prefix: string } {
  const [, bucket, path = ''] = /^s3:\/\/([^/]+)\/?(.*)$/.exec(location)!;
  const prefix = path.replace(/^\/+|\/+$/g, '');
  return { bucket, prefix: prefix ? `${prefix}/` : '' };
}

/** Runs `task` on every item, at most OBJECT_STORE_CONCURRENCY at a time; rejects with the first failure once all have settled. */
async function eachLimited<T>(items: readonly T[], task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      try {
        await task(item);
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(OBJECT_STORE_CONCURRENCY, items.length) }, worker));
  if (failure) throw failure instanceof Error ? failure : new Error(String(failure));
}
