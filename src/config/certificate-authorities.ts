import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';

/**
 * The certificate authorities provider connections trust: the system's plus those of
 * UPSTREAM_CA_FILE (PEM), or undefined without the file (Node's defaults). Throws an
 * error naming the variable when the file cannot be read or holds no certificate;
 * start-up validation calls it first, so a bad file stops the gateway before it serves.
 */
export function certificateAuthorities(file: string | undefined): string[] | undefined {
  if (!file) return undefined;
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`UPSTREAM_CA_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`UPSTREAM_CA_FILE: ${file} holds no PEM certificate`);
  return [...rootCertificates, pem];
}
