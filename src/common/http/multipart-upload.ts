import { Busboy, type BusboyInstance } from '@fastify/busboy';
import type { Request } from 'express';
import { PassThrough, type Readable } from 'node:stream';
import { ClientClosedRequestError, GatewayError } from '../errors/gateway-error';
import { closeAfterAnswer } from './json-body.middleware';

/** The bytes a peek read (MultipartPeek), handed to MultipartUpload so that it sees the whole form. */
export interface ConsumedBody {
  chunks: Buffer[];
  /** The request's body had ended: there is nothing more to read. */
  ended: boolean;
}

/** What the log keeps of an uploaded file: never its bytes. */
export interface UploadedFileSummary {
  field: string;
  filename: string;
  content_type: string;
  bytes: number;
}

/** The form as the log and the routing see it: text fields (a repeated one as an array) and file summaries. */
export interface FormSummary {
  fields: Record<string, string | string[]>;
  files: UploadedFileSummary[];
}

/** Text fields before the first file are held until the upload starts: a bound on that. */
const MAX_FIELD_BYTES = 1024 * 1024;
/** Enough of a WAV file's start to find its `fmt ` and `data` chunks. */
const WAV_SNIFF_BYTES = 4096;
/** More parts than a form of the API has; past these the form is refused, not cut silently. */
const MAX_FIELDS = 200;
const MAX_PARTS = 1000;

/**
 * A multipart/form-data upload streamed through to the provider: the client's bytes are
 * passed on unchanged (same boundary, so the provider sees exactly what was sent) while
 * a parser (busboy) reads the same bytes on the side for the log: the text fields, each
 * file's name, type and size, and a WAV file's duration. Nothing is held whole: the body
 * flows at the pace the provider reads it, and the upstream request can start as soon as
 * the text fields before the first file are known (`ready`).
 *
 * Over `limitBytes` the upload fails with 413 (from Content-Length before anything is
 * read, or as the stream passes the limit); a malformed form (cut short, a bad part
 * header, too many parts), or one without a required part, fails with 400; a client that
 * leaves mid-upload is a 499. Every emitter on the way (the request, the parser, each
 * file stream) has its `error` handled here: an unhandled one would end the process.
 */
export class MultipartUpload {
  readonly summary: FormSummary = { fields: {}, files: [] };
  /** The body for the upstream request: the client's bytes as they come. */
  readonly body: PassThrough;
  /** The multipart content type, boundary included, for the upstream request. */
  readonly contentType: string;
  /** The client's Content-Length, passed on so the provider gets a sized body; null when chunked. */
  readonly contentLength: number | null;
  /** Seconds of audio of the first file, when it is a WAV whose header says so. */
  wavSeconds: number | null = null;

  private readonly parser: BusboyInstance;
  private received = 0;
  private started = false;
  /** The parser has seen the form's closing delimiter; what follows (an epilogue) is still passed on. */
  private formRead = false;
  private failure: GatewayError | ClientClosedRequestError | null = null;
  private readonly consumedBytes: number;
  /** The latest chunk, kept from the provider while a required part is missing. */
  private held: Buffer | null = null;
  private readonly readyPromise: Promise<FormSummary>;
  private settleReady!: { resolve: (summary: FormSummary) => void; reject: (error: unknown) => void };
  private readonly finished: Promise<void>;
  private settleFinished!: { resolve: () => void; reject: (error: unknown) => void };

  constructor(
    private readonly req: Request,
    private readonly limitBytes: number,
    /** What the form must have: a missing part is a 400 naming it, and the provider never gets a complete form without it. */
    private readonly required: { file: boolean; fields: string[] },
    /** What a MultipartPeek read of the request already: the form begins with these bytes. */
    private readonly consumed: ConsumedBody | null = null,
  ) {
    const type = multipartTypeOf(req);
    this.contentType = type;
    this.consumedBytes = consumed?.chunks.reduce((sum, chunk) => sum + chunk.length, 0) ?? 0;
    const declared = checkDeclaredLength(req, limitBytes);
    this.contentLength = declared !== null && Number.isFinite(declared) ? declared : null;

    this.body = new PassThrough({ highWaterMark: 256 * 1024 });
    // Its reader (undici) reports a failure of the body; before there is one, nothing must throw.
    this.body.on('error', () => undefined);
    this.readyPromise = new Promise((resolve, reject) => (this.settleReady = { resolve, reject }));
    this.readyPromise.catch(() => undefined); // a failure is also reported by whoever reads the body
    this.finished = new Promise((resolve, reject) => (this.settleFinished = { resolve, reject }));
    this.finished.catch(() => undefined); // read only once the provider has answered
    try {
      this.parser = Busboy({
        headers: req.headers as { 'content-type': string },
        limits: { fieldSize: MAX_FIELD_BYTES, fields: MAX_FIELDS, parts: MAX_PARTS },
      });
    } catch (error) {
      // No boundary, an empty one, or one over 256 characters.
      throw malformed((error as Error).message);
    }
    this.parser.on('field', (name: string, value: string, _nameTruncated: boolean, valueTruncated: boolean) => this.onField(name, value, valueTruncated));
    this.parser.on('file', (field: string, stream: Readable, filename: string, _encoding: string, mimeType: string) =>
      this.onFile(field, stream, filename, mimeType),
    );
    this.parser.once('finish', () => this.onFormRead());
    // `on`, not `once`: the parser may report more than one error (the form, then its last part).
    this.parser.on('error', (error: Error) => this.fail(malformed(error.message)));
    this.parser.once('fieldsLimit', () => this.fail(malformed(`the form has more than ${MAX_FIELDS} text fields`)));
    this.parser.once('partsLimit', () => this.fail(malformed(`the form has more than ${MAX_PARTS} parts`)));
    this.pump();
  }

  /** Resolves with the text fields sent before the first file (or the whole form when it has none). */
  ready(): Promise<FormSummary> {
    return this.readyPromise;
  }

  /** Marks the body as taken by an upstream request: from now on the client's pace is the provider's. */
  start(): Readable {
    this.started = true;
    return this.body;
  }

  /** Resolves once the whole form has been read (the summary is then complete); rejects with the upload's failure. */
  async whenRead(): Promise<void> {
    await this.finished;
  }

  /** A failure the upload met (limit, malformed form, the client gone), to report instead of the upstream error it caused. */
  error(): GatewayError | ClientClosedRequestError | null {
    return this.failure;
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.failure || this.body.destroyed) return;
    this.received += chunk.length;
    if (this.received > this.limitBytes) return this.fail(GatewayError.payloadTooLarge(this.limitBytes));
    this.parser.write(chunk);
    // While a required part is still missing, the latest chunk is held back: the provider
    // must not get a complete form that the gateway is about to refuse (see onFormRead).
    const outgoing = this.held;
    this.held = chunk;
    if (outgoing) this.send(outgoing);
    if (!this.missing()) {
      this.send(this.held);
      this.held = null;
    }
    // (Bytes a peek held before are bounded by it, and the upstream request starts as they are given.)
    if (!this.started && this.body.readableLength > MAX_FIELD_BYTES + 64 * 1024 + this.consumedBytes) {
      this.fail(
        GatewayError.invalidRequest(`The form's text fields before the first file are larger than ${MAX_FIELD_BYTES} bytes`, null, 'invalid_multipart'),
      );
    }
  };

  private readonly onEnd = (): void => {
    if (this.failure) return;
    if (this.formRead) this.endBody();
    else this.parser.end();
  };

  /** A request stream fails only when its connection does (reset, or closed before the body's end): the client has gone. */
  private readonly onGone = (): void => {
    if (!this.req.complete) this.fail(new ClientClosedRequestError());
  };

  private pump(): void {
    const { req, consumed } = this;
    req.on('error', this.onGone);
    for (const chunk of consumed?.chunks ?? []) this.onData(chunk);
    if (consumed?.ended) return this.onEnd();
    req.on('data', this.onData);
    req.once('end', this.onEnd);
    req.once('close', this.onGone);
    // A request a peek read in paused mode stays paused until told.
    if (consumed) req.resume();
  }

  /** Our listeners off the request once it is read or refused; the `error` one stays, since a request's late error unheard would end the process. */
  private detach(): void {
    this.req.off('data', this.onData);
    this.req.off('end', this.onEnd);
    this.req.off('close', this.onGone);
  }

  /** Before the upstream request starts, the fields are held (bounded by MAX_FIELD_BYTES); after, the provider's pace holds the client back. */
  private send(chunk: Buffer): void {
    if (!this.body.write(chunk) && this.started) {
      this.req.pause();
      this.body.once('drain', () => this.req.resume());
    }
  }

  /** The first required part the form has not had (so far), or null. */
  private missing(): string | null {
    if (this.required.file && this.summary.files.length === 0) return 'file';
    return this.required.fields.find((field) => typeof this.summary.fields[field] !== 'string') ?? null;
  }

  /** The whole form has been parsed: refused when a required part is missing, else its last bytes go out. */
  private onFormRead(): void {
    if (this.failure) return;
    const missing = this.missing();
    if (missing) {
      const what = missing === 'file' ? "The form has no 'file' part" : `The form has no '${missing}' field`;
      return this.fail(GatewayError.invalidRequest(what, missing, 'missing_required_parameter'));
    }
    this.settleReady.resolve(this.summary);
    if (this.held) this.send(this.held);
    this.held = null;
    this.formRead = true;
    // The closing delimiter may come before the request's last bytes: the body ends with the request.
    if (this.req.complete) this.endBody();
  }

  private endBody(): void {
    this.body.end();
    this.detach();
    this.settleFinished.resolve();
  }

  private onField(name: string, value: string, truncated: boolean): void {
    if (truncated) return this.fail(GatewayError.invalidRequest(`Form field '${name}' is larger than ${MAX_FIELD_BYTES} bytes`, name, 'invalid_multipart'));
    const key = name.endsWith('[]') ? name.slice(0, -2) : name;
    const fields = this.summary.fields;
    const previous = fields[key];
    if (previous === undefined) fields[key] = name.endsWith('[]') ? [value] : value;
    else fields[key] = Array.isArray(previous) ? [...previous, value] : [previous, value];
  }

  private onFile(field: string, stream: Readable, filename: string, mimeType: string): void {
    const file: UploadedFileSummary = { field, filename, content_type: mimeType, bytes: 0 };
    this.summary.files.push(file);
    const first = this.summary.files.length === 1;
    let head: Buffer[] | null = first ? [] : null;
    let headBytes = 0;
    stream.on('data', (chunk: Buffer) => {
      file.bytes += chunk.length;
      if (head) {
        head.push(chunk);
        headBytes += chunk.length;
        if (headBytes >= WAV_SNIFF_BYTES) {
          this.wavSeconds = wavSeconds(Buffer.concat(head), null);
          head = null;
        }
      }
    });
    stream.once('end', () => {
      if (head) this.wavSeconds = wavSeconds(Buffer.concat(head), file.bytes);
      head = null;
    });
    // The parser passes its own failure on to the file being read ("Part terminated early").
    stream.on('error', (error: Error) => this.fail(malformed(error.message)));
    // The first file's start is the moment the fields before it are known.
    if (first) this.settleReady.resolve(this.summary);
  }

  private fail(error: GatewayError | ClientClosedRequestError): void {
    if (this.failure) return;
    this.failure = error;
    this.detach();
    this.held = null;
    // A body still coming is dropped, then the connection closes; a body read whole leaves it open.
    if (!this.req.complete && !this.req.destroyed) closeAfterAnswer(this.req, this.req.res!);
    this.settleReady.reject(error);
    this.settleFinished.reject(error);
    this.body.destroy(error);
    this.parser.destroy();
  }
}

/** The request's multipart content type (boundary included); a 400 for any other body. */
export function multipartTypeOf(req: Request): string {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*;.*boundary=/i.test(type)) {
    throw GatewayError.invalidRequest(
      `This operation takes a multipart/form-data body (got ${type ? `'${type.split(';')[0]}'` : 'no Content-Type'})`,
      null,
      'invalid_content_type',
    );
  }
  return type;
}

/** The body's declared length (null when chunked); a 413 before anything is read when it is over `limitBytes`. */
export function checkDeclaredLength(req: Request, limitBytes: number): number | null {
  const declared = req.headers['content-length'] === undefined ? null : Number(req.headers['content-length']);
  if (declared !== null && declared > limitBytes) {
    closeAfterAnswer(req, req.res!);
    throw GatewayError.payloadTooLarge(limitBytes);
  }
  return declared;
}

function malformed(why: string): GatewayError {
  return GatewayError.invalidRequest(`The multipart body cannot be read: ${why}`, null, 'invalid_multipart');
}

/**
 * A WAV file's duration from its header: the `fmt ` chunk's byte rate and the `data`
 * chunk's size (or, for a streamed WAV whose size field is unset, the file's size).
 * Null for anything else.
 */
export function wavSeconds(head: Buffer, fileBytes: number | null): number | null {
  if (head.length < 12 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WAVE') return null;
  let byteRate = 0;
  for (let offset = 12; offset + 8 <= head.length;) {
    const id = head.toString('latin1', offset, offset + 4);
    const size = head.readUInt32LE(offset + 4);
    if (id === 'fmt ' && offset + 16 <= head.length) byteRate = head.readUInt32LE(offset + 16);
    if (id === 'data') {
      if (!byteRate) return null;
      const dataBytes = size === 0xffffffff || size === 0 ? (fileBytes ?? 0) - offset - 8 : size;
      return dataBytes > 0 ? dataBytes / byteRate : null;
    }
    offset += 8 + size + (size % 2);
  }
  return null;
}
