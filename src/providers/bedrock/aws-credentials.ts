import { fromNodeProviderChain, fromTemporaryCredentials } from '@aws-sdk/credential-providers';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { createHash } from 'node:crypto';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ProviderTarget } from '../provider-target';

/** Temporary credentials are fetched again this long before they expire, so none expires in flight. */
const REFRESH_BEFORE_MS = 5 * 60_000;
/** Assumed roles kept at most (one per source identity, role and external id); the oldest goes first. */
const MAX_ASSUMED_ROLES = 500;

/**
 * A credential source asked once and then only when its credentials come within
 * REFRESH_BEFORE_MS of their expiry (never per request). Concurrent callers share one
 * fetch; a failed fetch is not kept, so the next request tries again.
 */
export class CachedCredentials {
  private pending: Promise<AwsCredentialIdentity> | null = null;
  private value: AwsCredentialIdentity | null = null;

  constructor(private readonly source: AwsCredentialIdentityProvider) {}

  get(): Promise<AwsCredentialIdentity> {
    if (this.value && !expiresSoon(this.value)) return Promise.resolve(this.value);
    this.pending ??= this.source()
      .then((credentials) => {
        this.value = credentials;
        return credentials;
      })
      .finally(() => (this.pending = null));
    return this.pending;
  }
}

function expiresSoon(credentials: AwsCredentialIdentity): boolean {
  return credentials.expiration !== undefined && credentials.expiration.getTime() - Date.now() < REFRESH_BEFORE_MS;
}

/** The gateway's own AWS identity (env vars, shared config, web identity on EKS, ECS or EC2 instance role), made once. */
let environmentCredentials: CachedCredentials | null = null;
const assumedRoles = new Map<string, CachedCredentials>();

/**
 * The credentials a Bedrock target signs with:
 * - the virtual key's `key` as the secret access key with `provider_options.aws_access_key_id`
 *   (and `aws_session_token` when temporary);
 * - per request, `x-gateway-aws-secret-access-key` as the key with the access key id,
 *   session token and region headers as those options (see the adapter's credentialHeaders);
 * - with no key and no access key id, on a virtual key only, the AWS default credential
 *   chain of the gateway's own environment (a header route without keys is a 400);
 * - then, with `provider_options.aws_role_arn`, that role assumed through STS by the
 *   identity above (`aws_external_id` passed on), e.g. a Bedrock account other than the gateway's.
 */
export async function awsCredentials(target: ProviderTarget, region: string): Promise<AwsCredentialIdentity> {
  const options = target.providerOptions;
  const base = await baseCredentials(target);
  const roleArn = options.aws_role_arn;
  if (!roleArn) return base;
  const externalId = options.aws_external_id || undefined;
  // The source identity is part of the key (hashed: the map holds no secret), so two keys never share a role's session.
  const key = createHash('sha256')
    .update(JSON.stringify([base.accessKeyId, base.secretAccessKey, roleArn, externalId ?? null, region]))
    .digest('hex');
  let cached = assumedRoles.get(key);
  if (!cached) {
    const provider = fromTemporaryCredentials({
      params: { RoleArn: roleArn, ExternalId: externalId, RoleSessionName: 'ai-gateway', DurationSeconds: 3600 },
      masterCredentials: base,
      clientConfig: { region },
    });
    cached = new CachedCredentials(provider);
    if (assumedRoles.size >= MAX_ASSUMED_ROLES) assumedRoles.delete(assumedRoles.keys().next().value!);
    assumedRoles.set(key, cached);
  }
  try {
    return await cached.get();
  } catch (error) {
    throw awsCredentialError(`could not assume ${roleArn} through STS`, error, 'provider_options.aws_role_arn');
  }
}

async function baseCredentials(target: ProviderTarget): Promise<AwsCredentialIdentity> {
  const options = target.providerOptions;
  const accessKeyId = options.aws_access_key_id;
  if (target.apiKey) {
    if (!accessKeyId) {
      throw GatewayError.invalidRequest(
        'Provider bedrock needs the AWS access key id that goes with the secret access key: set provider_options.aws_access_key_id on the virtual key (or x-gateway-aws-access-key-id)',
        'provider_options.aws_access_key_id',
      );
    }
    return { accessKeyId, secretAccessKey: target.apiKey, sessionToken: options.aws_session_token || undefined };
  }
  if (accessKeyId) {
    throw GatewayError.invalidRequest(
      `Provider bedrock has the access key id ${accessKeyId.slice(0, 4)}… but no secret access key: set it as the virtual key's key (or x-gateway-aws-secret-access-key)`,
      'key',
    );
  }
  // The gateway's own identity is an operator's to hand out: through a virtual key only,
  // never to whoever names the provider in a header (or an inline config).
  if (target.virtualKeyId === null) {
    throw GatewayError.invalidRequest(
      "Provider bedrock needs AWS credentials: x-gateway-aws-access-key-id and x-gateway-aws-secret-access-key (with x-gateway-provider: bedrock), or a virtual key; the gateway's own AWS identity serves virtual keys only",
      'x-gateway-aws-secret-access-key',
    );
  }
  environmentCredentials ??= new CachedCredentials(fromNodeProviderChain());
  try {
    return await environmentCredentials.get();
  } catch (error) {
    throw awsCredentialError(
      "found no AWS credentials in the gateway's environment (the virtual key has no key, so the default chain was asked: environment variables, web identity, container or instance role)",
      error,
      'key',
    );
  }
}

/** A failed credential fetch: STS's refusal keeps its 4xx status, anything else (no credentials, STS unreachable) is a 502. */
function awsCredentialError(what: string, error: unknown, param: string): GatewayError {
  const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  const message = `Provider bedrock ${what}: ${error instanceof Error ? error.message : String(error)}`;
  if (status && status >= 400 && status < 500)
    return new GatewayError(status === 400 ? 400 : 403, status === 400 ? 'invalid_request_error' : 'permission_error', message, 'aws_credentials', param);
  return new GatewayError(502, 'upstream_error', message, 'aws_credentials', param);
}

/** For tests: forget every cached credential. */
export function clearAwsCredentialCaches(): void {
  environmentCredentials = null;
  assumedRoles.clear();
}
