import { Readable } from 'node:stream';
import type { NextFunction, Request, Response } from 'express';
import { jsonBody } from './json-body.middleware';
import { jsonPayload } from './received-body';

/** Runs the middleware on `bytes` as a JSON request: the parsed body, or the error it passed on. */
function parse(bytes: Buffer): Promise<{ body: Record<string, unknown>; error?: { status: number; message: string } }> {
  const req = Object.assign(Readable.from([bytes]), {
    headers: { 'content-type': 'application/json', 'content-length': String(bytes.length) },
  }) as unknown as Request;
  return new Promise((resolve) => {
    const next: NextFunction = (error?: unknown) => resolve({ body: req.body, error: error as { status: number; message: string } | undefined });
    jsonBody(1024 * 1024)(req, {} as Response, next);
  });
}

/** Whether the body would go upstream as the bytes received (see received-body.ts). */
async function sentAsReceived(text: string | Buffer): Promise<boolean> {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const { body, error } = await parse(bytes);
  expect(error).toBeUndefined();
  const payload = jsonPayload(body);
  if (Buffer.isBuffer(payload)) expect(payload.equals(bytes)).toBe(true);
  return Buffer.isBuffer(payload);
}

describe('jsonBody', () => {
  it('keeps the bytes of a body of odd but valid formatting: key order, whitespace, escapes, 1.0', async () => {
    const odd = '{\n  "stream" : false,\t"model":"claude-x",\r\n "messages":[{"content":"caf\\u00e9 \\"{[\\\\","role":"user"}],"temperature":1.0,"n":1e0}';
    expect(await sentAsReceived(odd)).toBe(true);
    expect(await sentAsReceived('{"text":"ends in a backslash\\\\","a":{"b":[1,{"c":":"}]}}')).toBe(true);
  });

  it('reads text beyond ASCII as V8 would: accents, emoji, a byte-order mark inside a string, the last code point', async () => {
    const text = JSON.stringify({ model: 'm', content: 'café naïve 😀 \ufeff \u{10ffff} 漢字', [`clé ✓`]: '\u2028' });
    const { body, error } = await parse(Buffer.from(text));
    expect(error).toBeUndefined();
    expect(body).toEqual(JSON.parse(text));
    expect(await sentAsReceived(text)).toBe(true);
  });

  it('serialises a body in which an object repeats a key (the parser kept the last; a provider might read the first)', async () => {
    expect(await sentAsReceived('{"model":"cheap","messages":[],"model":"dear"}')).toBe(false);
    expect(await sentAsReceived('{"model":"m","stream_options":{"include_usage":false,"include_usage":true}}')).toBe(false);
    expect(await sentAsReceived('{"model":"m","mod\\u0065l":"n"}')).toBe(false);
  });

  it('serialises a body that is not valid UTF-8 (the parser replaced the bytes it could not read)', async () => {
    const bytes = Buffer.concat([Buffer.from('{"model":"m","content":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    expect(await sentAsReceived(bytes)).toBe(false);
  });

  it('counts nesting outside strings only: brackets in text are no depth, 65 levels are a 400', async () => {
    expect(await sentAsReceived(JSON.stringify({ text: '['.repeat(200) + '{'.repeat(200) }))).toBe(true);
    const deep = `${'['.repeat(64)}${']'.repeat(64)}`;
    expect((await parse(Buffer.from(deep))).error).toBeUndefined();
    const tooDeep = `{"a":${'['.repeat(64)}${']'.repeat(64)}}`;
    expect((await parse(Buffer.from(tooDeep))).error).toMatchObject({ status: 400, message: 'Request body is nested deeper than 64 levels' });
  });
});
