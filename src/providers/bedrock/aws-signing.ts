import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity } from '@smithy/types';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ProviderTarget } from '../provider-target';
import type { UpstreamRequest } from '../provider-adapter';
import { awsCredentials } from './aws-credentials';

/** AWS region names (`us-east-1`, `eu-central-2`, `us-gov-west-1`): they go into a host name, so nothing else is taken. */
const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

/** The region of a target, from `provider_options.aws_region`: 400 naming the field when missing or not a region. */
export function awsRegion(target: ProviderTarget): string {
  const region = target.providerOptions.aws_region;
  if (!region)
    throw GatewayError.invalidRequest(
      'Provider bedrock needs the AWS region: set provider_options.aws_region on the virtual key (or x-gateway-aws-region)',
      'provider_options.aws_region',
    );
  if (!REGION.test(region))
    throw GatewayError.invalidRequest(
      `provider_options.aws_region '${region.slice(0, 40)}' is not an AWS region name such as us-east-1`,
      'provider_options.aws_region',
    );
  return region;
}

/**
 * Signs a request with AWS Signature Version 4 (smithy's signer, as the AWS SDKs sign):
 * the method, the path as sent (the signer escapes each segment again, as the SDKs do),
 * the query, the host and every header, and the SHA-256 of the body
 * (`x-amz-content-sha256`), with the credentials of the target (static, assumed through
 * STS, or the gateway's own environment: see aws-credentials.ts). The answer is the same
 * request with `authorization`, `x-amz-date`, `x-amz-content-sha256` and, for temporary
 * credentials, `x-amz-security-token`.
 */
export async function signAwsRequest(request: UpstreamRequest, target: ProviderTarget, service: string): Promise<UpstreamRequest> {
  if (request.body !== undefined && typeof request.body !== 'string') throw new Error('An AWS request body must be text to be signed');
  const region = awsRegion(target);
  const credentials: AwsCredentialIdentity = await awsCredentials(target, region);
  const url = new URL(request.url);
  const signer = new SignatureV4({ service, region, credentials, sha256: Sha256 });
  const query: Record<string, string> = {};
  url.searchParams.forEach((value, name) => (query[name] = value));
  const signed = await signer.sign({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    path: url.pathname,
    query,
    headers: { ...request.headers, host: url.host },
    body: request.body,
  });
  return { ...request, headers: signed.headers };
}
