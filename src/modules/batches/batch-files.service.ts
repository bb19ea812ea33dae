import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DataSource } from 'typeorm';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ReadFile } from '../../common/http/multipart-peek';
import type { Environment } from '../../config/environment';
import type { ApiKeyPrincipal } from '../../context/caller';
import { readsOwnRequestsOnly } from '../workspaces/roles';
import { BatchResults } from './batch-results';

/** OpenAI keeps a batch file 30 days unless told otherwise. */
const DEFAULT_LIFETIME_SECONDS = 30 * 86_400;

/** Ids of the files the gateway keeps (batch inputs, outputs and errors); any other file id is the provider's. */
const GATEWAY_FILE_ID = /^file-gw[0-9a-f]{32}$/;

export function isGatewayFileId(id: string): boolean {
  return GATEWAY_FILE_ID.test(id);
}

export function newGatewayFileId(): string {
  return `file-gw${randomBytes(16).toString('hex')}`;
}

interface FileRow {
  id: string;
  purpose: string;
  filename: string;
  bytes: string;
  batch_id: string | null;
  created_at: Date;
  expires_at: Date | null;
}

/** Who reads files: an API key sees its workspace's, a `member` only those it uploaded (as with logs). */
export interface FileReader {
  workspaceId: string;
  apiKeyId: string | null;
}

export function fileReaderOf(principal: ApiKeyPrincipal): FileReader {
  return { workspaceId: principal.workspaceId, apiKeyId: readsOwnRequestsOnly(principal.role) ? principal.id : null };
}

/**
 * The files of batches, kept by the gateway (table `batch_files`): a JSONL uploaded with
 * `purpose: "batch"` (any provider can then run it, natively or line by line), and a batch's
 * output and error files, whose content is written from its lines when read
 * (BatchResults). Answered in OpenAI's file shape under `/v1/files`; every other file is the
 * provider's and passes through.
 */
@Injectable()
export class BatchFiles {
  readonly limitBytes: number;

  constructor(
    private readonly db: DataSource,
    private readonly results: BatchResults,
    config: ConfigService<Environment, true>,
  ) {
    this.limitBytes = config.get('BATCH_FILE_LIMIT_BYTES', { infer: true });
  }

  /** Keeps an uploaded batch file, until `expires_after[seconds]` (with `expires_after[anchor]: created_at`) or 30 days, as OpenAI does. */
  async store(principal: ApiKeyPrincipal, file: ReadFile, fields: Record<string, string>): Promise<Record<string, unknown>> {
    if (!file.content.length) throw GatewayError.invalidRequest('The file is empty', 'file', 'empty_file');
    const expiresInSeconds = expiresAfter(fields);
    const id = newGatewayFileId();
    const [row] = await this.db.query<FileRow[]>(
      `insert into batch_files (id, workspace_id, api_key_id, purpose, filename, bytes, content, expires_at)
       values ($1, $2, $3, 'batch', $4, $5, $6, now() + $7 * interval '1 second') returning id, purpose, filename, bytes, batch_id, created_at, expires_at`,
      [
        id,
        principal.workspaceId,
        principal.kind === 'api_key' ? principal.id : null,
        file.filename.slice(0, 255) || 'batch.jsonl',
        file.content.length,
        file.content,
        expiresInSeconds,
      ],
    );
    return toFileObject(row);
  }

  async retrieve(reader: FileReader, id: string): Promise<Record<string, unknown>> {
    return toFileObject(await this.row(reader, id));
  }

  async list(reader: FileReader, query: { purpose?: string; limit?: string; after?: string }): Promise<Record<string, unknown>> {
    const limit = Math.min(Math.max(Number(query.limit) || 20, 1), 10_000);
    const params: unknown[] = [reader.workspaceId, limit + 1];
    let where = 'workspace_id = $1';
    if (reader.apiKeyId) where += ` and api_key_id = $${params.push(reader.apiKeyId)}`;
    if (query.purpose) where += ` and purpose = $${params.push(query.purpose)}`;
    if (query.after) where += ` and (created_at, id) < (select created_at, id from batch_files where id = $${params.push(query.after)})`;
    const rows = await this.db.query<FileRow[]>(
      `select id, purpose, filename, bytes, batch_id, created_at, expires_at from batch_files where ${where} order by created_at desc, id desc limit $2`,
      params,
    );
    const data = rows.slice(0, limit).map(toFileObject);
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit };
  }

  async delete(reader: FileReader, id: string): Promise<Record<string, unknown>> {
    await this.row(reader, id);
    await this.db.query(`delete from batch_files where id = $1`, [id]);
    return { id, object: 'file', deleted: true };
  }

  /** A file's bytes: an upload's as stored, an output or error file written from its batch's lines. */
  async content(reader: FileReader, id: string): Promise<Readable> {
    const row = await this.row(reader, id);
    if (row.batch_id) return Readable.from(this.results.openAiFile(row.batch_id, row.purpose === 'batch_output' ? 'output' : 'error'));
    const [{ content }] = await this.db.query<{ content: Buffer }[]>(`select content from batch_files where id = $1`, [id]);
    return Readable.from([content]);
  }

  /** An uploaded batch file's bytes, for a batch being created (404 unless the reader may read it, 400 unless it is a batch input). */
  async input(reader: FileReader, id: string): Promise<Buffer> {
    const row = await this.row(reader, id, 'input_file_id');
    if (row.purpose !== 'batch' || row.batch_id)
      throw GatewayError.invalidRequest(`File ${id} was not uploaded with purpose "batch"`, 'input_file_id', 'invalid_input_file');
    const [{ content }] = await this.db.query<{ content: Buffer }[]>(`select content from batch_files where id = $1`, [id]);
    return content;
  }

  private async row(reader: FileReader, id: string, param = 'file_id'): Promise<FileRow> {
    const params: unknown[] = [id, reader.workspaceId];
    const own = reader.apiKeyId ? ` and api_key_id = $${params.push(reader.apiKeyId)}` : '';
    const [row] = await this.db.query<FileRow[]>(
      `select id, purpose, filename, bytes, batch_id, created_at, expires_at from batch_files where id = $1 and workspace_id = $2${own}`,
      params,
    );
    if (!row) throw GatewayError.notFound(`No such file: ${id}`, param === 'file_id' ? 'file_not_found' : 'input_file_not_found');
    return row;
  }
}

/** A batch file's lifetime: `expires_after[seconds]` (3600 to 2592000, anchored at `created_at`), else OpenAI's 30 days. */
function expiresAfter(fields: Record<string, string>): number {
  const anchor = fields['expires_after[anchor]'];
  const seconds = fields['expires_after[seconds]'];
  if (anchor === undefined && seconds === undefined) return DEFAULT_LIFETIME_SECONDS;
  if (anchor !== 'created_at')
    throw GatewayError.invalidRequest('expires_after[anchor] must be "created_at"', 'expires_after[anchor]', 'invalid_expires_after');
  const value = Number(seconds);
  if (!/^\d+$/.test(seconds ?? '') || value < 3600 || value > DEFAULT_LIFETIME_SECONDS)
    throw GatewayError.invalidRequest('expires_after[seconds] must be a whole number from 3600 to 2592000', 'expires_after[seconds]', 'invalid_expires_after');
  return value;
}

/** OpenAI's File object. */
function toFileObject(row: FileRow): Record<string, unknown> {
  return {
    id: row.id,
    object: 'file',
    bytes: Number(row.bytes),
    created_at: Math.floor(row.created_at.getTime() / 1000),
    expires_at: row.expires_at ? Math.floor(row.expires_at.getTime() / 1000) : null,
    filename: row.filename,
    purpose: row.purpose,
    status: 'processed',
    status_details: null,
  };
}
