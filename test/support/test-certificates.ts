/**
 * A certificate authority and a server certificate for `localhost` and 127.0.0.1, made
 * once per process with `selfsigned` (no openssl command needed, so `npm test` runs
 * anywhere Node does), for mock providers served over TLS: HTTP/2 needs it, since
 * providers offer it through ALPN. The gateway trusts the authority through
 * UPSTREAM_CA_FILE (`caFile`), as an operator trusts an internal CA.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';

export interface TestCertificates {
  /** PEM of the authority, and the path of a file holding it. */
  ca: string;
  caFile: string;
  /** The server's key and certificate (signed by the authority). */
  key: string;
  cert: string;
}

let made: Promise<TestCertificates> | undefined;

export function testCertificates(): Promise<TestCertificates> {
  return (made ??= make());
}

async function make(): Promise<TestCertificates> {
  const notAfterDate = new Date(Date.now() + 7 * 86_400_000);
  const authority = await generate([{ name: 'commonName', value: 'Gateway test CA' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    curve: 'P-256',
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const server = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    curve: 'P-256',
    notAfterDate,
    ca: { key: authority.private, cert: authority.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  const caFile = join(mkdtempSync(join(tmpdir(), 'gateway-certs-')), 'ca.pem');
  writeFileSync(caFile, authority.cert);
  return { ca: authority.cert, caFile, key: server.private, cert: server.cert };
}
