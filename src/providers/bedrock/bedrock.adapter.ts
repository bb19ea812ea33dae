import { GatewayError } from '../../common/errors/gateway-error';
import type { ProviderTarget } from '../provider-target';
import type { ChatTranslation } from '../chat-format';
import { IgnoredParams } from '../ignored-params';
import type { ProviderAdapter, UpstreamRequest } from '../provider-adapter';
import { signAwsRequest } from './aws-signing';
import { AWS_EVENT_STREAM_TYPE, modelUrl } from './bedrock-urls';
import { bedrockEmbeddings } from './invoke-embeddings';
import { bedrockCountTokens, bedrockMessages } from './invoke-messages';
import { toConverseRequest, withAutoCachePoints } from './converse-request';
import { cachesByBreakpoint } from './converse-messages';
import { toChatCompletion, toOpenAIError } from './converse-response';
import { ConverseChatStreamDecoder } from './converse-stream';

const translation: ChatTranslation = {
  toChatCompletion,
  streamDecoder: (model) => new ConverseChatStreamDecoder(model),
  toOpenAIError,
};

/** Chat completions through Converse, or ConverseStream (AWS's binary event stream) for streams. */
function buildChatRequest(body: Record<string, unknown>, target: ProviderTarget): UpstreamRequest {
  if (typeof body.model !== 'string' || !body.model)
    throw GatewayError.invalidRequest('model must be a string naming a Bedrock model id or inference profile', 'model');
  const ignored = new IgnoredParams(target.strictParams);
  const translated = toConverseRequest(body, ignored);
  const request = target.autoCacheBreakpoints && cachesByBreakpoint(body.model) ? withAutoCachePoints(translated) : translated;
  const stream = body.stream === true;
  return {
    method: 'POST',
    url: modelUrl(target, body.model, stream ? 'converse-stream' : 'converse'),
    headers: { 'content-type': 'application/json', accept: stream ? AWS_EVENT_STREAM_TYPE : 'application/json' },
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
  // Claude natively (InvokeModel); other models reach /v1/messages through the chat bridge and Converse.
  messages: bedrockMessages,
  // Claude's count_tokens through CountTokens (an InvokeModel body, base64); other models are estimated.
  messagesCountTokens: bedrockCountTokens,
  // Cohere Embed and Titan Text Embeddings through InvokeModel, a Titan batch fanned out one text a request.
  embeddings: bedrockEmbeddings,
  signRequest: (request, target) => signAwsRequest(request, target, 'bedrock'),
  // Per request (CONTRACT section 9); without them a header route has no AWS identity at all (see aws-credentials.ts).
  credentialHeaders: {
    key: 'x-gateway-aws-secret-access-key',
    options: {
      'x-gateway-aws-access-key-id': 'aws_access_key_id',
      'x-gateway-aws-session-token': 'aws_session_token',
      'x-gateway-aws-region': 'aws_region',
    },
  },
};
