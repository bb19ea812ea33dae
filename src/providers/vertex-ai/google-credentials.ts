import { readFile } from 'node:fs/promises';
import type { GoogleAuth } from 'google-auth-library';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ProviderTarget } from '../provider-target';
import type { CredentialFetch } from '../provider-adapter';
import { AccessTokenCache, type MintedToken } from './access-token-cache';
import { CLOUD_PLATFORM_SCOPE, parseServiceAccount, tokenFromAnswer, tokenRequest, type ServiceAccount } from './service-account';

/** The cache id of the gateway's own Application Default Credentials. */
const ADC_ID = 'application-default-credentials';
/** When Google's library gives no expiry, a token is kept no longer than Google's usual hour minus a margin. */
const ASSUMED_LIFETIME_MS = 55 * 60_000;

/**
 * Bearer tokens for Google Cloud from what a target carries as its `key`:
 * - a service-account JSON: a token minted from it (a JWT-bearer exchange at its
 *   `token_uri`) and cached per credential until shortly before it expires;
 * - anything else: a ready access token, sent as it is;
 * - nothing, on a virtual key: the gateway's own Application Default Credentials (GKE
 *   workload identity, a metadata server, `GOOGLE_APPLICATION_CREDENTIALS`).
 *
 * Why the exchange is ours and not `google-auth-library`'s `JWT`: that client (10.x, and
 * 11.x alike) posts to and signs for `https://oauth2.googleapis.com/token` whatever the
 * JSON's `token_uri` says, so a key for a private or sovereign endpoint would fail.
 * The library still serves the ADC sources it knows (metadata server, user credentials,
 * workload identity federation); a service-account file named by
 * `GOOGLE_APPLICATION_CREDENTIALS` is read here, for its `token_uri`.
 */
export class GoogleCredentials {
  private readonly tokens: AccessTokenCache;
  private adc?: GoogleAuth;

  constructor(private readonly now: () => number = Date.now) {
    this.tokens = new AccessTokenCache(now);
  }

  async accessToken(target: ProviderTarget, fetch: CredentialFetch): Promise<string> {
    const key = target.apiKey;
    if (key) {
      if (!key.trimStart().startsWith('{')) return key;
      return this.tokens.token(AccessTokenCache.idOf(key), () => this.mint(parseServiceAccount(parseJson(key, 'key'), 'key'), fetch));
    }
    // The gateway's own identity is an operator's to hand out: through a virtual key only,
    // never to whoever names the provider in a header.
    if (target.virtualKeyId === null) {
      throw GatewayError.invalidRequest(
        "Vertex AI needs a key: a service-account JSON or an access token (the gateway's own Google credentials serve virtual keys only)",
        'key',
      );
    }
    return this.tokens.token(ADC_ID, () => this.mintFromApplicationDefault(fetch));
  }

  private async mint(account: ServiceAccount, fetch: CredentialFetch): Promise<MintedToken> {
    const { status, body } = await fetch(tokenRequest(account, CLOUD_PLATFORM_SCOPE, Math.floor(this.now() / 1000)));
    return tokenFromAnswer(account, status, body, this.now());
  }

  private async mintFromApplicationDefault(fetch: CredentialFetch): Promise<MintedToken> {
    const file = process.env.GOOGLE_APPLICATION_CREDENTIALS;
    if (file) {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch {
        throw GatewayError.unavailable('Vertex AI: GOOGLE_APPLICATION_CREDENTIALS names a file the gateway cannot read');
      }
      const json = parseJson(text, 'GOOGLE_APPLICATION_CREDENTIALS');
      if ((json as Record<string, unknown>)?.type === 'service_account') return this.mint(parseServiceAccount(json, 'GOOGLE_APPLICATION_CREDENTIALS'), fetch);
    }
    try {
      // Loaded on first use: most gateways never reach Vertex AI without a key.
      const { GoogleAuth } = await import('google-auth-library');
      this.adc ??= new GoogleAuth({ scopes: [CLOUD_PLATFORM_SCOPE] });
      const client = await this.adc.getClient();
      const { token } = await client.getAccessToken();
      if (!token) throw new Error('no access token');
      return { token, expiresAt: client.credentials.expiry_date ?? this.now() + ASSUMED_LIFETIME_MS };
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      const reason = error instanceof Error ? error.message.split('\n')[0].slice(0, 300) : 'unknown error';
      throw new GatewayError(
        401,
        'authentication_error',
        `Vertex AI: no key, and the gateway's Application Default Credentials gave no token (${reason})`,
        'provider_credential_refused',
      );
    }
  }
}

function parseJson(text: string, field: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw GatewayError.invalidRequest(`${field} starts like JSON but is not valid JSON (a service-account JSON or an access token is expected)`, field);
  }
}
