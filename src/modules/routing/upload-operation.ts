import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Request } from 'express';
import { Readable } from 'node:stream';
import type { RequestContext } from '../../context/request-context';
import type { GatewayResult } from './gateway-result';
import { FormSummary, MultipartUpload, type ConsumedBody } from '../../common/http/multipart-upload';
import type { Environment } from '../../config/environment';
import type { UpstreamRequest } from '../../providers/provider-adapter';
import type { NormalizedUsage } from '../../providers/usage';
import { UpstreamAttempt } from '../upstream/upstream-attempt';
import type { RouteTarget } from '../../context/route-plan';
import { RouteExecutor } from './route-executor';

/** What an upload operation (a file, audio to transcribe) adds to the shared steps. */
export interface UploadSpec {
  /** The upstream request's URL and auth for a target; the form's text fields known so far are given (Azure's deployment may come from `model`). */
  request(target: RouteTarget, fields: FormSummary['fields']): UpstreamRequest;
  /** Usage from the provider's JSON answer (null for a text answer), or from the upload itself (a WAV's duration). */
  usage(json: Record<string, any> | null, upload: MultipartUpload): NormalizedUsage | null;
}

/** A text answer (a transcript as text, SRT or VTT) is logged up to this many characters. */
const LOGGED_TEXT_CHARS = 64 * 1024;

/**
 * Multipart uploads (`/v1/files`, audio transcriptions and translations): the form streams
 * through to the provider as the client sends it (MultipartUpload), routed like any
 * request, with no retry or fallback once sent (the body cannot be sent twice). The log
 * keeps the text fields and each file's name, type and size, never its bytes. JSON
 * answers pass through as bytes; text answers with their content type.
 */
@Injectable()
export class UploadOperations {
  private readonly limitBytes: number;

  constructor(
    private readonly executor: RouteExecutor,
    private readonly attempts: UpstreamAttempt,
    config: ConfigService<Environment, true>,
  ) {
    this.limitBytes = config.get('UPLOAD_LIMIT_BYTES', { infer: true });
  }

  /** `consumed`: the bytes a MultipartPeek read of the form already (`/v1/files` reads up to `purpose` first). */
  async run(
    context: RequestContext,
    req: Request,
    spec: UploadSpec,
    required: { file: boolean; fields: string[] },
    consumed: ConsumedBody | null = null,
  ): Promise<GatewayResult> {
    const upload = new MultipartUpload(req, this.limitBytes, required, consumed);
    const logForm = () => context.logRequestAs({ ...upload.summary.fields, files: upload.summary.files });
    const form = await upload.ready().finally(logForm);
    if (typeof form.fields.model === 'string') context.model = form.fields.model;

    return this.executor.execute(
      context.begin({}), // the form is logged as read (logForm)
      { ...form.fields },
      async (target, _body, attempt) => {
        const request = spec.request(target, form.fields);
        request.headers = { ...request.headers, 'content-type': upload.contentType };
        if (upload.contentLength !== null) request.headers['content-length'] = String(upload.contentLength);
        request.body = upload.start();
        let answer;
        try {
          answer = await this.attempts.sendRequest(context, target, request);
          await upload.whenRead();
        } catch (error) {
          throw upload.error() ?? error;
        } finally {
          logForm();
          if (typeof upload.summary.fields.model === 'string') attempt.model = upload.summary.fields.model;
        }
        const contentType = String(answer.response.headers['content-type'] ?? '');
        if (/json/i.test(contentType)) {
          const { raw, json } = await this.attempts.readJsonObject(context, answer);
          return {
            kind: 'json',
            status: answer.response.status,
            body: raw,
            outcome: { responseBody: json, usage: spec.usage(json, upload), servedModel: null },
          };
        }
        const raw = await this.attempts.readBody(context, answer);
        const text = raw.toString('utf8');
        const logged = { type: 'text', content_type: contentType, text: text.length > LOGGED_TEXT_CHARS ? `${text.slice(0, LOGGED_TEXT_CHARS)}…` : text };
        const outcome = Promise.resolve({ responseBody: logged, usage: spec.usage(null, upload), servedModel: null });
        return { kind: 'binary', status: answer.response.status, contentType: contentType || 'text/plain', body: Readable.from([raw]), outcome };
      },
      { cacheable: false, replayable: false },
    );
  }
}
