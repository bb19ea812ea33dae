import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { RequestLogEntity } from '../entities/request-log.entity';
import { joinBody, partCount, type BodyLayout } from './body-parts';
import { PartStore } from './part-store';

/** Parts read per query: a page of an export names thousands. */
const PARTS_PER_QUERY = 2_000;

/**
 * Puts log rows' bodies back together from their parts (CONTRACT section 14): one query
 * per PARTS_PER_QUERY distinct parts of the rows read, each part read once however many
 * rows share it; the parts PostgreSQL does not hold are read from the object store when
 * there is one (PartStore: parts stored before LOG_BODY_STORE was set stay readable). A part that is gone (or a layout that does not fit its hashes) reads as
 * `{"_missing_part": "<hash>"}` in place, never an error.
 */
@Injectable()
export class LogBodyReader {
  constructor(
    private readonly dataSource: DataSource,
    private readonly partStore: PartStore,
  ) {}

  /** Replaces, in place, the skeleton bodies of the rows that have parts by the whole bodies. */
  async join(rows: RequestLogEntity[]): Promise<void> {
    const split = rows.filter((row) => row.partLayout && row.partHashes?.length && (row.requestBody !== undefined || row.responseBody !== undefined));
    if (split.length === 0) return;
    const wanted = new Map<string, [string, string]>();
    for (const row of split) {
      for (const hash of row.partHashes!) wanted.set(`${row.workspaceId}/${hash}`, [row.workspaceId, hash]);
    }
    const found = new Map<string, unknown>();
    const keys = [...wanted.values()];
    for (let start = 0; start < keys.length; start += PARTS_PER_QUERY) {
      const chunk = keys.slice(start, start + PARTS_PER_QUERY);
      const parts: { workspace_id: string; hash: string; body: unknown }[] = await this.dataSource.query(
        `select p.workspace_id, p.hash, p.body
         from unnest($1::uuid[], $2::uuid[]) as k(workspace_id, hash)
         join log_body_parts p on p.workspace_id = k.workspace_id and p.hash = k.hash
         where p.body is not null`,
        [chunk.map(([workspaceId]) => workspaceId), chunk.map(([, hash]) => hash)],
      );
      for (const part of parts) found.set(`${part.workspace_id}/${part.hash}`, part.body);
    }
    // Parts not in PostgreSQL are in the object store (LOG_BODY_STORE), or gone.
    if (!this.partStore.inDatabase && found.size < wanted.size) {
      for (const [key, body] of await this.partStore.get(keys.filter(([workspaceId, hash]) => !found.has(`${workspaceId}/${hash}`)))) found.set(key, body);
    }
    for (const row of split) {
      const hashes = row.partHashes!;
      const read = (hash: string) => found.get(`${row.workspaceId}/${hash}`);
      const { request = [], response = [] } = row.partLayout as { request?: BodyLayout; response?: BodyLayout };
      const requestCount = partCount(request);
      if (row.requestBody !== undefined) row.requestBody = joinBody(row.requestBody, request, hashes.slice(0, requestCount), read);
      if (row.responseBody !== undefined) row.responseBody = joinBody(row.responseBody, response, hashes.slice(requestCount), read);
    }
  }
}
