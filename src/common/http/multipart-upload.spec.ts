import type { Request } from 'express';
import { PassThrough } from 'node:stream';
import { ClientClosedRequestError, GatewayError } from '../errors/gateway-error';
import { MultipartUpload } from './multipart-upload';

/** A request as MultipartUpload reads it: a stream of body bytes with Node's `complete` flag. */
function fakeRequest(contentType = 'multipart/form-data; boundary=XYZ'): Request & PassThrough & { finish(last?: string): void } {
  const req = Object.assign(new PassThrough(), {
    headers: { 'content-type': contentType },
    complete: false,
    res: { headersSent: false, setHeader: () => undefined, once: () => undefined },
    socket: {},
    finish(last?: string) {
      req.complete = true;
      req.end(last);
    },
  });
  return req as unknown as Request & PassThrough & { finish(last?: string): void };
}

/** Starts the upload and collects what the provider would receive. */
function start(upload: MultipartUpload): { sent: () => string } {
  const chunks: Buffer[] = [];
  upload.start().on('data', (chunk: Buffer) => chunks.push(chunk));
  return { sent: () => Buffer.concat(chunks).toString('latin1') };
}

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error,
  );
const ourListeners = (req: PassThrough) => ({
  data: req.listenerCount('data'),
  end: req.listenerCount('end'),
  close: req.listenerCount('close'),
  error: req.listenerCount('error'),
});
const FORM =
  '--XYZ\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nfine-tune\r\n--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.jsonl"\r\n\r\n{"a":1}\r\n--XYZ--\r\n';
const REQUIRED = { file: true, fields: ['purpose'] };

describe('MultipartUpload', () => {
  const passThroughErrors = new PassThrough().listenerCount('error');

  it('a form read whole: every byte passed on, the summary complete, its listeners off the request', async () => {
    const req = fakeRequest();
    const upload = new MultipartUpload(req, 1024 * 1024, REQUIRED);
    const provider = start(upload);
    req.write(FORM);
    req.finish();
    await upload.whenRead();
    expect(provider.sent()).toBe(FORM);
    expect(upload.summary).toEqual({ fields: { purpose: 'fine-tune' }, files: [{ field: 'file', filename: 'a.jsonl', content_type: 'text/plain', bytes: 7 }] });
    expect(ourListeners(req)).toEqual({ data: 0, end: 0, close: 0, error: passThroughErrors + 1 });
  });

  it('bytes after the closing delimiter, in a later chunk, are passed on too (the provider was promised Content-Length bytes)', async () => {
    const req = fakeRequest();
    const upload = new MultipartUpload(req, 1024 * 1024, REQUIRED);
    const provider = start(upload);
    req.write(FORM.slice(0, -2));
    await new Promise((resolve) => setImmediate(resolve));
    req.finish('\r\n');
    await upload.whenRead();
    expect(provider.sent()).toBe(FORM);
  });

  it('a form cut short (issue 32): a 400, reported once, nothing thrown; the body to the provider fails', async () => {
    const req = fakeRequest();
    const upload = new MultipartUpload(req, 1024 * 1024, { file: true, fields: [] });
    const provider = start(upload);
    req.write('--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc');
    req.finish();
    expect(await upload.ready()).toMatchObject({ files: [{ filename: 'a' }] });
    const failure = await failureOf(upload.whenRead());
    expect(failure).toBeInstanceOf(GatewayError);
    expect(failure).toMatchObject({ status: 400, code: 'invalid_multipart', message: 'The multipart body cannot be read: Unexpected end of multipart data' });
    expect(upload.error()).toBe(failure);
    expect(upload.body.destroyed).toBe(true);
    expect(provider.sent()).not.toContain('--XYZ--');
    expect(ourListeners(req)).toEqual({ data: 0, end: 0, close: 0, error: passThroughErrors + 1 });
  });

  it('a client that leaves mid-upload: client_closed_request, and the provider never gets a complete form', async () => {
    const req = fakeRequest();
    const upload = new MultipartUpload(req, 1024 * 1024, REQUIRED);
    const provider = start(upload);
    req.write(FORM.slice(0, 120));
    req.destroy();
    expect(await failureOf(upload.whenRead())).toBeInstanceOf(ClientClosedRequestError);
    expect(provider.sent()).not.toContain('--XYZ--');
  });

  it.each([
    ['too many text fields', `${'--XYZ\r\nContent-Disposition: form-data; name="f"\r\n\r\nv\r\n'.repeat(201)}--XYZ--\r\n`, /more than 200 text fields/],
    ['too many parts', `${'--XYZ\r\nContent-Disposition: form-data; name="f"; filename="x"\r\n\r\nv\r\n'.repeat(1001)}--XYZ--\r\n`, /more than 1000 parts/],
    ['a text field over 1 MiB', `--XYZ\r\nContent-Disposition: form-data; name="purpose"\r\n\r\n${'p'.repeat(1024 * 1024 + 1)}\r\n--XYZ--\r\n`, /larger than/],
  ])('%s: a 400, not a silently shortened form', async (_, form, message) => {
    const req = fakeRequest();
    const upload = new MultipartUpload(req, 16 * 1024 * 1024, { file: false, fields: [] });
    start(upload);
    req.write(form);
    req.finish();
    expect(await failureOf(upload.whenRead())).toMatchObject({ status: 400, message });
  });

  it.each([
    ['no boundary', 'multipart/form-data; charset=utf-8'],
    ['a boundary over 256 characters', `multipart/form-data; boundary=${'b'.repeat(300)}`],
  ])('%s: a 400 before anything is read', (_, contentType) => {
    expect(() => new MultipartUpload(fakeRequest(contentType), 1024, REQUIRED)).toThrow(GatewayError);
  });
});
