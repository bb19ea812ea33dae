import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { S3_TEST_CREDENTIALS, verifySignature } from './mock-bedrock';

// s3rver ships no types; what is used of it here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as new (options: Record<string, unknown>) => { run(): Promise<AddressInfo>; close(): Promise<void> };
// s3rver knows only its own dummy key; ours is added to its account (it takes SigV4 requests of a known key unchecked).
// eslint-disable-next-line @typescript-eslint/no-require-imports
(require('s3rver/lib/models/account') as { DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void } }).DUMMY_ACCOUNT.createKeyPair(
  S3_TEST_CREDENTIALS.accessKeyId,
  S3_TEST_CREDENTIALS.secretAccessKey,
);

/**
 * An S3-compatible object store for the log body store (LOG_BODY_STORE=s3://…): s3rver
 * (npm; objects on disk in a temporary folder) behind a front that checks what S3 checks
 * and s3rver does not: the SigV4 signature of every request (service `s3`, the secret of
 * S3_TEST_CREDENTIALS, the body's SHA-256 against x-amz-content-sha256). A request that
 * fails the check is answered 403 in S3's XML error shape and never reaches the store.
 */
export interface MockS3 {
  /** The endpoint to give LOG_BODY_STORE_ENDPOINT. */
  url: string;
  bucket: string;
  /** Object keys in the bucket, sorted. */
  keys(): string[];
  /** Requests the front answered, by outcome. */
  requests: { method: string; path: string; status: number }[];
  /** While set, every request is answered 503 SlowDown (the store is "down"). */
  failing: boolean;
  stop(): Promise<void>;
}

export async function startMockS3(bucket = 'gateway-logs'): Promise<MockS3> {
  const directory = mkdtempSync(join(tmpdir(), 'mock-s3-'));
  const store = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port: storePort } = await store.run();
  const requests: MockS3['requests'] = [];
  const front = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const answer = (status: number, code: string, message: string) => {
        requests.push({ method: req.method!, path: req.url!, status });
        res.writeHead(status, { 'content-type': 'application/xml' });
        res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`);
      };
      if (mock.failing) return answer(503, 'SlowDown', 'Please reduce your request rate.');
      const [path, rawQuery = ''] = req.url!.split('?', 2);
      const call = {
        method: req.method!,
        path,
        rawQuery,
        headers: req.headers,
        body: undefined,
        badJson: false,
        flakyFailures: new Map(),
        rawBody: body.toString('utf8'),
      };
      verifySignature(call, 's3').then(
        (refusal) => {
          if (refusal) return answer(403, refusal.name === 'InvalidSignatureException' ? 'SignatureDoesNotMatch' : 'InvalidAccessKeyId', refusal.message);
          const forwarded = http.request({ host: '127.0.0.1', port: storePort, method: req.method, path: req.url, headers: req.headers }, (stored) => {
            requests.push({ method: req.method!, path: req.url!, status: stored.statusCode! });
            res.writeHead(stored.statusCode!, stored.headers);
            stored.pipe(res);
          });
          forwarded.on('error', (error) => answer(500, 'InternalError', error.message));
          forwarded.end(body);
        },
        (error: unknown) => answer(500, 'InternalError', String(error)),
      );
    });
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const objects = join(directory, bucket);
  const mock: MockS3 = {
    url: `http://127.0.0.1:${(front.address() as AddressInfo).port}`,
    bucket,
    requests,
    failing: false,
    // s3rver keeps an object as the file `<key>._S3rver_object` beside its metadata.
    keys: () =>
      walk(objects)
        .filter((file) => file.endsWith('._S3rver_object'))
        .map((file) => relative(objects, file).replace(/\._S3rver_object$/, ''))
        .sort(),
    stop: async () => {
      await new Promise<void>((resolve) => front.close(() => resolve()));
      await store.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
  return mock;
}

function walk(folder: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(folder);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const path = join(folder, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

export { S3_TEST_CREDENTIALS };
