import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { GatewayError } from '../../common/errors/gateway-error';
import type { UpstreamRequest } from '../provider-adapter';
import type { MintedToken } from './access-token-cache';

/** Google's OAuth2 token endpoint, for a service-account JSON that names none. */
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';
/** What Vertex AI needs of a token. */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Google accepts assertions valid for at most an hour. */
const ASSERTION_LIFETIME_S = 3600;

/** The parts of a service-account key file (`"type": "service_account"`) the token exchange uses. */
export interface ServiceAccount {
  clientEmail: string;
  privateKey: KeyObject;
  privateKeyId: string | null;
  /** Where tokens are minted: the JSON's `token_uri` (a private cloud, a test's mock), else Google's. */
  tokenUri: string;
}

/**
 * A service-account key file, parsed; a 400 naming the field that is missing or wrong.
 * `field` is how the caller names the JSON (`key` for a virtual key's credential).
 */
export function parseServiceAccount(json: unknown, field: string): ServiceAccount {
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw GatewayError.invalidRequest(`${field} must be a service-account JSON object`, field);
  const account = json as Record<string, unknown>;
  if (account.type !== undefined && account.type !== 'service_account') {
    throw GatewayError.invalidRequest(`${field}.type must be "service_account" (got ${JSON.stringify(account.type).slice(0, 60)})`, `${field}.type`);
  }
  const clientEmail = account.client_email;
  if (typeof clientEmail !== 'string' || !clientEmail)
    throw GatewayError.invalidRequest(`${field}.client_email is required in a service-account JSON`, `${field}.client_email`);
  if (typeof account.private_key !== 'string' || !account.private_key) {
    throw GatewayError.invalidRequest(`${field}.private_key is required in a service-account JSON`, `${field}.private_key`);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(account.private_key);
  } catch {
    // The reason would quote nothing of the key, but say no more than needed about a secret.
    throw GatewayError.invalidRequest(`${field}.private_key is not a PEM private key`, `${field}.private_key`);
  }
  if (privateKey.asymmetricKeyType !== 'rsa') throw GatewayError.invalidRequest(`${field}.private_key must be an RSA key (RS256)`, `${field}.private_key`);
  const tokenUri = account.token_uri ?? GOOGLE_TOKEN_URI;
  if (typeof tokenUri !== 'string' || !/^https?:\/\//i.test(tokenUri)) {
    throw GatewayError.invalidRequest(`${field}.token_uri must be an http(s) URL`, `${field}.token_uri`);
  }
  const privateKeyId = typeof account.private_key_id === 'string' && account.private_key_id ? account.private_key_id : null;
  return { clientEmail, privateKey, privateKeyId, tokenUri };
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/**
 * The JWT a service account signs to ask for a token (RFC 7523, as Google's OAuth2
 * server reads it): RS256, `iss` the account, `aud` the token endpoint it is sent to,
 * `scope` what the token may do, valid for an hour from `nowS`.
 */
export function jwtAssertion(account: ServiceAccount, scope: string, nowS: number): string {
  const header = { alg: 'RS256', typ: 'JWT', ...(account.privateKeyId ? { kid: account.privateKeyId } : {}) };
  const claims = { iss: account.clientEmail, scope, aud: account.tokenUri, iat: nowS, exp: nowS + ASSERTION_LIFETIME_S };
  const signed = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  return `${signed}.${base64url(sign('sha256', Buffer.from(signed), account.privateKey))}`;
}

/** The token exchange: the signed assertion posted, form-encoded, to the account's `token_uri`. */
export function tokenRequest(account: ServiceAccount, scope: string, nowS: number): UpstreamRequest {
  const form = new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion: jwtAssertion(account, scope, nowS) });
  return { method: 'POST', url: account.tokenUri, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() };
}

/**
 * The token endpoint's answer: `{access_token, expires_in}` on 200; otherwise a 401
 * saying which account the endpoint refused and its reason (`invalid_grant: Invalid JWT
 * Signature.`), never the assertion or the key.
 */
export function tokenFromAnswer(account: ServiceAccount, status: number, body: Buffer, nowMs: number): MintedToken {
  let json: Record<string, unknown> | null = null;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (parsed !== null && typeof parsed === 'object') json = parsed as Record<string, unknown>;
  } catch {
    json = null;
  }
  const endpoint = new URL(account.tokenUri).origin;
  if (status < 200 || status >= 300) {
    const reason =
      json && typeof json.error === 'string'
        ? `${json.error}${typeof json.error_description === 'string' ? `: ${json.error_description}` : ''}`
        : `status ${status}`;
    throw new GatewayError(
      401,
      'authentication_error',
      `Vertex AI: the token endpoint ${endpoint} refused the service account ${account.clientEmail} (${reason.slice(0, 300)})`,
      'provider_credential_refused',
    );
  }
  const token = json?.access_token;
  const expiresIn = json?.expires_in;
  if (typeof token !== 'string' || !token || typeof expiresIn !== 'number' || !(expiresIn > 0)) {
    throw GatewayError.upstreamMalformed(`Vertex AI: the token endpoint ${endpoint} answered without access_token and expires_in`);
  }
  return { token, expiresAt: nowMs + expiresIn * 1000 };
}
