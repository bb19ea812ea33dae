/**
 * A certificate authority and a server certificate for `localhost` and 127.0.0.1, made
 * with the openssl command line once per process, for mock providers served over TLS
 * (HTTP/2 needs it: providers offer it through ALPN). The gateway trusts the authority
 * through UPSTREAM_CA_FILE (`caFile`), as an operator trusts an internal CA.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificates {
  /** PEM of the authority, and the path of a file holding it. */
  ca: string;
  caFile: string;
  /** The server's key and certificate (signed by the authority). */
  key: string;
  cert: string;
}

let made: TestCertificates | undefined;

export function testCertificates(): TestCertificates {
  if (made) return made;
  const dir = mkdtempSync(join(tmpdir(), 'gateway-certs-'));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=Gateway test CA', '-keyout', file('ca.key'), '-out', file('ca.pem'));
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=localhost', '-keyout', file('server.key'), '-out', file('server.csr'));
  writeFileSync(file('server.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  openssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', file('server.ext'), '-out', file('server.pem'));
  made = { ca: readFileSync(file('ca.pem'), 'utf8'), caFile: file('ca.pem'), key: readFileSync(file('server.key'), 'utf8'), cert: readFileSync(file('server.pem'), 'utf8') };
  return made;
}
