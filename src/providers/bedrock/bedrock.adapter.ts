import { GatewayError } from '../../common/errors/gateway-error';
import type { RouteTarget } from '../../modules/routing/route-plan';
import type { ChatTranslation } from '../chat-format';
import { IgnoredParams } from '../ignored-params';
import type { ProviderAdapter, UpstreamRequest } from '../provider-adapter';
import { awsRegion, signAwsRequest } from './aws-signing';
import { toConverseRequest } from './converse-request';
import { toChatCompletion, toOpenAIError } from './converse-response';
import { ConverseChatStreamDecoder } from './converse-stream';

/** The Bedrock Runtime endpoint of a target: its `custom_host` (a VPC endpoint, a proxy), else the region's. */
export function bedrockBaseUrl(target: RouteTarget): string {
  const region = awsRegion(target);
  return (target.customHost ?? `https://bedrock-runtime.${region}.amazonaws.com`).replace(/\/+$/, '');
}

/**
 * The path of a model's method. Model ids are Bedrock's own, inference profiles
 * (`us.`/`eu.`/`global.` …) and ARNs included; the id is one path segment, so its `:`
 * and `/` (an ARN's) are escaped.
 */
export function modelUrl(target: RouteTarget, model: string, method: string): string {
  return `${bedrockBaseUrl(target)}/model/${encodeURIComponent(model)}/${method}`;
}

const translation: ChatTranslation = {
  toChatCompletion,
  streamDecoder: (model) => new ConverseChatStreamDecoder(model),
  toOpenAIError,
};

/** Chat completions through Converse, or ConverseStream (AWS's binary event stream) for streams. */
function buildChatRequest(body: Record<string, unknown>, target: RouteTarget): UpstreamRequest {
  if (typeof body.model !== 'string' || !body.model) throw GatewayError.invalidRequest('model must be a string naming a Bedrock model id or inference profile', 'model');
  const ignored = new IgnoredParams(target.strictParams);
  const request = toConverseRequest(body, ignored);
  const stream = body.stream === true;
  return {
    method: 'POST',
    url: modelUrl(target, body.model, stream ? 'converse-stream' : 'converse'),
    headers: { 'content-type': 'application/json', accept: stream ? 'application/vnd.amazon.eventstream' : 'application/json' },
    body: JSON.stringify(request),
    ignoredParams: ignored.list(),
  };
}

/**
 * AWS Bedrock Runtime: every request SigV4-signed (service `bedrock`) just before it is
 * sent, with the virtual key's AWS credentials or the gateway's own (CONTRACT section 9).
 */
export const bedrockAdapter: ProviderAdapter = {
  id: 'bedrock',
  // With no key the AWS default credential chain of the gateway's environment signs.
  credentialOptional: true,
  requiresCustomHost: false,
  chatCompletions: { buildRequest: buildChatRequest, translation },
  signRequest: (request, target) => signAwsRequest(request, target, 'bedrock'),
};
