import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { all, checkBody, isArray, isNotEmpty, isObject, isString, Rule } from '../../../common/pipes/body-rules';

const fileIds: Rule = (v, f) =>
  isArray(0, 500)(v, f) ?? ((v as unknown[]).every((id) => typeof id === 'string' && id.length > 0) ? null : `${f} must contain file ids (non-empty strings)`);
const query: Rule = (v, f) =>
  typeof v === 'string'
    ? v.length
      ? null
      : `${f} should not be empty`
    : Array.isArray(v) && v.length > 0 && v.every((q) => typeof q === 'string')
      ? null
      : `${f} must be a string or an array of strings`;

/** `POST /v1/vector_stores` and `POST /v1/vector_stores/{id}` (modify); other fields pass through. */
export class VectorStoreCreateDto {
  [extra: string]: unknown;

  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, {
      required: {},
      optional: { name: isString(256), file_ids: fileIds, metadata: isObject, expires_after: isObject, chunking_strategy: isObject },
    });
  }

  @ApiPropertyOptional({ example: 'Support articles' })
  name?: string;

  @ApiPropertyOptional({ example: ['file-abc123'], maxItems: 500 })
  file_ids?: string[];
}

/** `POST /v1/vector_stores/{id}/files`: one uploaded file added to the store. */
export class VectorStoreFileCreateDto {
  [extra: string]: unknown;

  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, { required: { file_id: all(isString(256), isNotEmpty) }, optional: { attributes: isObject, chunking_strategy: isObject } });
  }

  @ApiProperty({ example: 'file-abc123' })
  file_id: string;
}

/** `POST /v1/vector_stores/{id}/file_batches`: several files at once. */
export class VectorStoreFileBatchCreateDto {
  [extra: string]: unknown;

  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, { required: { file_ids: all(fileIds, isNotEmpty) }, optional: { attributes: isObject, chunking_strategy: isObject } });
  }

  @ApiProperty({ example: ['file-abc123', 'file-def456'] })
  file_ids: string[];
}

/** `POST /v1/vector_stores/{id}/search`. */
export class VectorStoreSearchDto {
  [extra: string]: unknown;

  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, { required: { query }, optional: { filters: isObject, ranking_options: isObject } });
  }

  @ApiProperty({ example: 'How do I reset my password?' })
  query: string | string[];
}
