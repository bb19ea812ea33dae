import { Busboy, type BusboyInstance } from '@fastify/busboy';
import type { Request } from 'express';
import type { Readable } from 'node:stream';
import { ClientClosedRequestError, GatewayError } from '../errors/gateway-error';
import { closeAfterAnswer } from './json-body.middleware';
import { checkDeclaredLength, multipartTypeOf, type ConsumedBody } from './multipart-upload';

/** The first file of a form read whole (MultipartPeek.readFile). */
export interface ReadFile {
  filename: string;
  content: Buffer;
}

/** Past this, a form whose file came before the field is no longer held: it goes on without the field known. */
const HOLD_LIMIT_BYTES = 16 * 1024 * 1024;
const MAX_FIELD_BYTES = 1024 * 1024;

/**
 * Reads the start of a multipart form (a 400 for another body, a 413 past `limitBytes`, from
 * its Content-Length before anything is read) until one text field is known, to decide who takes
 * the form: `/v1/files` keeps a `purpose: "batch"` file itself and streams every other
 * upload through to the provider. The form's bytes read so far are kept (`consumed`) for the
 * upload that goes on; the first file's bytes are kept too, in case the form stays here
 * (`readFile`). A field sent after a large file (over 16 MB held) is not waited for: the
 * form then goes on as if it lacked it.
 *
 * The request is read in paused mode and stops being read once the field is known, so the
 * next reader attaches to a request that has lost nothing. A malformed form is a 400, a
 * client that leaves a 499; every emitter's `error` is handled.
 */
export class MultipartPeek {
  readonly fields: Record<string, string> = {};
  private file: { filename: string; chunks: Buffer[]; bytes: number; ended: boolean } | null = null;
  private readonly raw: Buffer[] = [];
  private rawBytes = 0;
  private ended = false;
  private formRead = false;
  private failure: Error | null = null;
  private readonly parser: BusboyInstance;
  private wake: (() => void) | null = null;
  private fileLimit = Infinity;
  private keepRaw = true;

  private constructor(
    private readonly req: Request,
    private readonly limitBytes: number,
  ) {
    multipartTypeOf(req);
    checkDeclaredLength(req, limitBytes);
    try {
      this.parser = Busboy({ headers: req.headers as { 'content-type': string }, limits: { fieldSize: MAX_FIELD_BYTES, fields: 200, parts: 1000 } });
    } catch (error) {
      throw malformed((error as Error).message);
    }
    this.parser.on('field', (name: string, value: string) => {
      this.fields[name] ??= value;
    });
    this.parser.on('file', (_field: string, stream: Readable, filename: string) => this.onFile(stream, filename));
    this.parser.on('finish', () => {
      this.formRead = true;
      this.notify();
    });
    this.parser.on('error', (error: Error) => this.fail(malformed(error.message)));
    req.on('readable', this.onReadable);
    req.once('end', this.onEnd);
    req.on('error', this.onGone);
    req.once('close', this.onGone);
  }

  /**
   * Reads `req` until the text field `name` is known (then `fields[name]`), the form has
   * ended without it, or a file before it passed the hold limit. Rejects with the form's
   * failure (400 malformed, 499 client gone).
   */
  static async untilField(req: Request, name: string, limitBytes: number): Promise<MultipartPeek> {
    const peek = new MultipartPeek(req, limitBytes);
    // At the body's end the parser is ended too: it finishes (formRead) or fails (a form cut short), and that is waited for.
    await peek.waitFor(() => name in peek.fields || peek.formRead || (peek.file !== null && peek.rawBytes > HOLD_LIMIT_BYTES));
    return peek;
  }

  /** The whole form has been read, to its closing delimiter. */
  get complete(): boolean {
    return this.formRead;
  }

  /** Stops reading and hands over what was read: the next reader (MultipartUpload) begins with these bytes, then the request. */
  consumed(): ConsumedBody {
    this.stop();
    return { chunks: this.raw.splice(0), ended: this.ended };
  }

  /** Reads the rest of the form and returns its first file whole; over `limitBytes` a 400 naming `file`, no file a 400 too. */
  async readFile(limitBytes: number): Promise<ReadFile> {
    this.fileLimit = limitBytes;
    // The form stays here: its raw bytes are no longer needed.
    this.keepRaw = false;
    this.raw.length = 0;
    this.checkFileLimit();
    await this.waitFor(() => this.formRead);
    this.stop();
    if (!this.file) throw GatewayError.invalidRequest("The form has no 'file' part", 'file', 'missing_required_parameter');
    return { filename: this.file.filename, content: Buffer.concat(this.file.chunks) };
  }

  private readonly onReadable = (): void => {
    let chunk: Buffer | null;
    // One chunk at a time, and no read past the moment a waiter is satisfied: a read() that
    // returns null at the end would emit 'end', and the next reader must still see the stream open.
    while (!this.failure && this.wake && (chunk = this.req.read() as Buffer | null) !== null) {
      if (this.keepRaw) this.raw.push(chunk);
      this.rawBytes += chunk.length;
      if (this.rawBytes > this.limitBytes) return this.fail(GatewayError.payloadTooLarge(this.limitBytes));
      this.parser.write(chunk);
      this.notify();
    }
  };

  private readonly onEnd = (): void => {
    this.ended = true;
    if (!this.formRead) this.parser.end();
    this.notify();
  };

  private readonly onGone = (): void => {
    if (!this.req.complete) this.fail(new ClientClosedRequestError());
  };

  private onFile(stream: Readable, filename: string): void {
    if (this.file) return void stream.resume(); // only the first file is kept
    const file = { filename, chunks: [] as Buffer[], bytes: 0, ended: false };
    this.file = file;
    stream.on('data', (chunk: Buffer) => {
      file.bytes += chunk.length;
      if (this.checkFileLimit()) file.chunks.push(chunk);
    });
    stream.on('error', (error: Error) => this.fail(malformed(error.message)));
    this.notify();
  }

  /** False (and the form refused) once the first file passed `fileLimit`. */
  private checkFileLimit(): boolean {
    if (!this.file || this.file.bytes <= this.fileLimit) return true;
    this.fail(GatewayError.invalidRequest(`The file is larger than the limit of ${this.fileLimit} bytes`, 'file', 'file_too_large'));
    return false;
  }

  private condition: (() => boolean) | null = null;

  private waitFor(condition: () => boolean): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (condition()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.condition = condition;
      this.wake = () => {
        if (this.failure) reject(this.failure);
        else if (this.condition?.()) resolve();
        else return;
        this.wake = null;
        this.condition = null;
      };
      this.onReadable(); // what is already buffered
    });
  }

  private notify(): void {
    this.wake?.();
  }

  private stop(): void {
    this.req.off('readable', this.onReadable);
    this.req.off('end', this.onEnd);
    this.req.off('close', this.onGone);
    // The `error` listener stays: a request's late error unheard would end the process.
  }

  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    this.stop();
    this.raw.length = 0;
    if (this.file) this.file.chunks.length = 0;
    if (!this.req.complete && !this.req.destroyed) closeAfterAnswer(this.req, this.req.res!);
    this.parser.destroy();
    this.notify();
  }
}

function malformed(why: string): GatewayError {
  return GatewayError.invalidRequest(`The multipart body cannot be read: ${why}`, null, 'invalid_multipart');
}
