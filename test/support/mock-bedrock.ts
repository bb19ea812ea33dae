/**
 * AWS Bedrock Runtime in the mock upstream (mock-upstream.ts hands every request here first;
 * `serveBedrock` answers true when it served it).
 *
 * Routes:
 *   POST /model/{modelId}/converse         one Converse answer {output: {message}, stopReason, usage, metrics}
 *   POST /model/{modelId}/converse-stream  AWS's binary event stream (application/vnd.amazon.eventstream),
 *        frames encoded with @smithy/eventstream-codec: messageStart, contentBlockStart (tool use),
 *        contentBlockDelta (text word by word, tool input JSON in two pieces), contentBlockStop,
 *        messageStop {stopReason}, metadata {usage, metrics}
 *   The model id comes from the path, URL-decoded (inference profiles `us.…`, ARNs).
 *
 * What a real endpoint verifies, verified here:
 *   - SigV4: the Authorization header's credential scope (service `bedrock`, a region), the
 *     signature recomputed with smithy's signer from the test secret of its access key id
 *     (BEDROCK_TEST_CREDENTIALS) over the method, path, query, signed headers and the body
 *     (x-amz-content-sha256 must be the body's SHA-256): 403 InvalidSignatureException "The
 *     request signature we calculated does not match the signature you provided. …" otherwise;
 *     no Authorization: 403 MissingAuthenticationTokenException; an unknown access key id: 403
 *     UnrecognizedClientException "The security token included in the request is invalid.";
 *     x-amz-date more than 5 minutes off: 403 InvalidSignatureException "Signature expired".
 *     A temporary key id (BEDROCK_TEST_SESSION) also needs its x-amz-security-token, signed.
 *   - errors as AWS sends them: `{"message": …}` with the name in `x-amzn-errortype`.
 *   - body checks, 400 ValidationException: `messages` non-empty, roles alternating from user,
 *     content blocks text | image {format png|jpeg|gif|webp, source.bytes base64} | document |
 *     toolUse | toolResult (matching an earlier toolUse id), toolUse/toolResult need toolConfig;
 *     top-level fields of ConverseRequest only.
 *   - prompt caching: cachePoint {type: "default"} blocks, never first, in messages' content,
 *     `system` and `toolConfig.tools`, at most 4 in all, for Claude and Nova models only (others: 400 ValidationException
 *     "This model doesn't support the cachePoint field."); a request with one reports
 *     cacheWriteInputTokens 50 and cacheReadInputTokens 200 in its usage.
 *   - models: anthropic., meta., mistral., amazon., cohere. ids (optionally with a us./eu./apac./global.
 *     profile prefix) and the mock-* behaviour models; anything else 400 ValidationException
 *     "The provided model identifier is invalid." as Bedrock answers.
 *
 * Claude's thinking (additionalModelRequestFields.thinking {type: enabled, budget_tokens >= 1024, below
 * inferenceConfig.maxTokens, temperature 1 or unset; other models refuse the field): a reasoningContent
 * block {reasoningText: {text, signature}} before the text; streamed as reasoningContent text deltas and a
 * signature delta in block 0, the text in block 1.
 *
 * Replies: text "Hello from mock"; the rest of the last user text when it starts with "echo:";
 * the system blocks' text when it is "system?"; "Image <format> <bytes> bytes" for a last user
 * turn holding an image; with tools and a last user text mentioning "weather": one toolUse
 * {name: the first tool (or toolChoice.tool.name), input {location: "Paris"}}, stopReason tool_use.
 * A tool script (the last user turn without toolResult blocks starts with "tools:"; syntax in
 * mock-tool-script.ts): round r (the assistant turns with toolUse blocks after it) answers step r's
 * calls as toolUse blocks {toolUseId: "tooluse_" + 22 characters, name, input: the arguments}
 * (several for a step of several calls; streamed one block each: contentBlockStart, the input in
 * two deltas, contentBlockStop), stopReason tool_use; a tool not in toolConfig.tools: text "no tool
 * <name>". After the last step: text "results: " + the toolResult contents (text blocks, json
 * blocks as JSON; "error: " first when status is "error") after that user turn, joined by " / ".
 * InvokeModel follows it as Anthropic's Messages API does (mock-anthropic.ts).
 * usage: inputTokens = ceil(chars of system + message texts / 4) (min 1), outputTokens = words of
 * the text (tool use: the input's JSON fragments, 5 for {"location":"Paris"}), totalTokens.
 *
 * InvokeModel for Claude (anthropic.claude… ids, profile prefixes allowed):
 *   POST /model/{modelId}/invoke                       Anthropic's message as JSON
 *   POST /model/{modelId}/invoke-with-response-stream  the binary event stream; each `chunk` event is
 *        {"bytes": "<base64 of one Anthropic stream event>"}, message_stop carrying
 *        `amazon-bedrock-invocationMetrics` as Bedrock adds it
 *   The body is Anthropic's Messages body (checked and answered as mock-anthropic-body.ts does) with
 *   `anthropic_version: "bedrock-2023-05-31"` required, `model` and `stream` refused as extraneous keys,
 *   betas as `anthropic_beta: [...]`; every refusal is AWS's 400 ValidationException. A model that is not
 *   Claude: 400 ValidationException (the mock's InvokeModel knows no other body). Behaviour switches
 *   follow the Claude prefix: `us.anthropic.claude-mock-error-429`.
 *
 * CountTokens for Claude: POST /model/{modelId}/count-tokens, signature checked as above, body exactly
 *   `{"input": {"invokeModel": {"body": "<base64 of an InvokeModel body>"}}}` (a `converse` input is not
 *   served here: 400), the decoded body checked as InvokeModel checks it (version, no model / stream,
 *   max_tokens and the rest of the create's rules) → `{"inputTokens": N}`, N counted as Anthropic's
 *   count_tokens is (countInputTokens in mock-anthropic-body.ts). A model that is not Claude, an inference
 *   profile (`us.anthropic.claude-…`: AWS counts foundation model ids only) or a Claude id containing
 *   `mock-no-count` (a model CountTokens does not cover): 400 ValidationException "The provided model
 *   doesn't support counting tokens."; error switches as for InvokeModel (`anthropic.claude-mock-error-429`).
 *
 * InvokeModel for embedding models (cohere.embed-… and amazon.titan-embed-text-… / -g1-text-… ids, profile
 * prefixes allowed), signature checked as above, the input token count in `x-amzn-bedrock-input-token-count`
 * (ceil(chars / 4), at least 1, per text, summed) as Bedrock sends it:
 *   Cohere Embed: `{texts (1..96 strings of at most 2048 characters), input_type (search_document |
 *        search_query | classification | clustering, required), truncate? (NONE | START | END),
 *        embedding_types? (["float"] only here), output_dimension? (v4 only: 256 | 512 | 1024 | 1536)}`
 *        → `{id, texts, embeddings: [[…]], response_type: "embeddings_floats"}`, or with embedding_types
 *        `{…, embeddings: {float: [[…]]}, response_type: "embeddings_by_type"}`; v3 vectors have 1024 numbers,
 *        v4 1536 (or output_dimension).
 *   Titan Text Embeddings: `{inputText (non-empty), dimensions? (v2 only: 256 | 512 | 1024), normalize? (v2
 *        only, boolean)}` → `{embedding, inputTextTokenCount}` (v2 adds embeddingsByType {float}); v2 vectors
 *        have 1024 numbers (or dimensions), v1 and G1 1536.
 *   Any other key: 400 ValidationException "extraneous key [x] is not permitted". A text that contains
 *   "mock-throttle" answers 429 ThrottlingException (one part of a fanned-out request failing).
 *   Vectors are mockEmbeddingVector(text, size): deterministic, exact in float32.
 *
 * STS (reached through AWS_ENDPOINT_URL_STS = this mock's URL): POST / with the query-protocol form
 *   body Action=AssumeRole&Version=2011-06-15&RoleArn=…&RoleSessionName=…[&ExternalId=…], SigV4-signed for
 *   service `sts` (checked as above); BEDROCK_TEST_CREDENTIALS may assume BEDROCK_TEST_ROLE with its external
 *   id and gets BEDROCK_TEST_ASSUMED in STS's XML (AssumeRoleResponse, expiring in an hour); anything else is
 *   STS's XML ErrorResponse (403 AccessDenied). Calls are noted in stsAssumeRoleCalls.
 *
 * Behaviour switches by model name (see mock-upstream.ts), errors in AWS's shape (mock-error-429 is a
 * ThrottlingException), and mock-stream-exception: a stream that sends a word, then an exception
 * frame (modelStreamErrorException).
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec, type MessageHeaders } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type * as http from 'node:http';
import { THINKING_TEXT, anthropicId, countInputTokens, invalidBody, mcpBetaMissing, messageEvents, plan as anthropicPlan } from './mock-anthropic-body';
import type { MockCall } from './mock-call';
import { answerToolScript, argumentFragments, type ScriptTurn } from './mock-tool-script';
// A cycle (mock-upstream.ts imports this file), harmless: both only call each other per request.
import { answerFailureSwitch, behaviourOf, sendJson } from './mock-upstream';

/** The AWS identities the mock knows: access key id → secret (and the session token a temporary one needs). */
export const BEDROCK_TEST_CREDENTIALS = { accessKeyId: 'AKIAMOCKBEDROCK00001', secretAccessKey: 'mock/Bedrock+Secret0000000000000000000001' };
export const BEDROCK_TEST_SESSION = {
  accessKeyId: 'ASIAMOCKBEDROCK00002',
  secretAccessKey: 'mock/Bedrock+Secret0000000000000000000002',
  sessionToken: 'mock-session-token-2',
};
/** What STS hands out for BEDROCK_TEST_ROLE: signs Bedrock requests like any temporary key. */
export const BEDROCK_TEST_ASSUMED = {
  accessKeyId: 'ASIAMOCKASSUMED00003',
  secretAccessKey: 'mock/Assumed+Secret0000000000000000000003',
  sessionToken: 'mock-assumed-session-token-3',
};
/** The role the mock's STS lets BEDROCK_TEST_CREDENTIALS assume, given its external id. */
export const BEDROCK_TEST_ROLE = { arn: 'arn:aws:iam::123456789012:role/bedrock-invoker', externalId: 'mock-external-id' };
/** The identity the mock object store (mock-s3.ts) lets in. */
export const S3_TEST_CREDENTIALS = { accessKeyId: 'AKIAMOCKS3STORE00001', secretAccessKey: 'mock/S3+Secret000000000000000000000000001' };
const IDENTITIES = new Map<string, { secretAccessKey: string; sessionToken?: string }>([
  [BEDROCK_TEST_CREDENTIALS.accessKeyId, BEDROCK_TEST_CREDENTIALS],
  [S3_TEST_CREDENTIALS.accessKeyId, S3_TEST_CREDENTIALS],
  [BEDROCK_TEST_SESSION.accessKeyId, BEDROCK_TEST_SESSION],
  [BEDROCK_TEST_ASSUMED.accessKeyId, BEDROCK_TEST_ASSUMED],
]);
/** Every AssumeRole the mock's STS granted or refused, for tests that count them. */
export const stsAssumeRoleCalls: { roleArn: string | null; externalId: string | null; signedBy: string | null; granted: boolean }[] = [];

const ROUTE = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream|count-tokens)$/;
const KNOWN_MODEL = /^((us|eu|apac|global|us-gov)\.)?(anthropic|meta|mistral|amazon|cohere|deepseek|ai21)\.[A-Za-z0-9.:_-]+$/;
const ERROR_NAMES: Record<number, string> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};
const ERROR_MESSAGES: Record<number, string> = {
  403: "You don't have access to the model with the specified model ID.",
  404: 'Could not resolve the foundation model from the provided model identifier.',
  429: 'Too many requests, please wait before trying again.',
  500: 'The server encountered an internal error while processing the request.',
  503: 'Bedrock is unable to process your request.',
};
const CONVERSE_FIELDS = new Set([
  'messages',
  'system',
  'inferenceConfig',
  'toolConfig',
  'guardrailConfig',
  'additionalModelRequestFields',
  'additionalModelResponseFieldPaths',
  'promptVariables',
  'requestMetadata',
  'performanceConfig',
]);
const IMAGE_FORMATS = new Set(['png', 'jpeg', 'gif', 'webp']);
const codec = new EventStreamCodec(toUtf8, fromUtf8);

export function sendAwsError(res: http.ServerResponse, status: number, name: string, message: string, extra?: Record<string, string>): void {
  sendJson(res, status, JSON.stringify({ message }), {
    'x-amzn-errortype': `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    'x-amzn-requestid': 'mock-request-id',
    ...extra,
  });
}

export function serveBedrock(res: http.ServerResponse, call: MockCall): boolean {
  if (isAssumeRole(call)) return (serveAssumeRole(res, call), true);
  const route = call.method === 'POST' ? ROUTE.exec(call.path) : null;
  if (!route) return false;
  verifySignature(call).then(
    (refusal) => {
      if (refusal) return sendAwsError(res, 403, refusal.name, refusal.message);
      const model = decodeURIComponent(route[1]);
      if (route[2] === 'count-tokens') countTokens(res, call, model);
      else if (route[2] === 'invoke' && EMBED_MODEL.test(model)) invokeEmbeddings(res, call, model);
      else if (route[2].startsWith('invoke')) invoke(res, call, model, route[2] === 'invoke-with-response-stream');
      else answer(res, call, model, route[2] === 'converse-stream');
    },
    (error: unknown) => sendAwsError(res, 500, 'InternalServerException', `Mock failure: ${String(error)}`),
  );
  return true;
}

/** What AWS checks of a SigV4 request; null when it holds. */
export async function verifySignature(call: MockCall, service = 'bedrock'): Promise<{ name: string; message: string } | null> {
  const authorization = String(call.headers.authorization ?? '');
  const parsed = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
    authorization,
  );
  if (!parsed) return { name: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const [, accessKeyId, day, region, signedService, signedHeaders, signature] = parsed;
  const identity = IDENTITIES.get(accessKeyId);
  if (!identity) return { name: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  if (signedService !== service) return { name: 'InvalidSignatureException', message: `Credential should be scoped to correct service: '${service}'.` };
  const amzDate = String(call.headers['x-amz-date'] ?? '');
  const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!date || !amzDate.startsWith(day))
    return { name: 'IncompleteSignatureException', message: 'Date must be in ISO-8601 basic format and match the credential scope.' };
  const signingDate = new Date(Date.UTC(+date[1], +date[2] - 1, +date[3], +date[4], +date[5], +date[6]));
  if (Math.abs(Date.now() - signingDate.getTime()) > 5 * 60_000)
    return { name: 'InvalidSignatureException', message: `Signature expired: ${amzDate} is now earlier or later than the allowed window.` };
  const names = signedHeaders.split(';');
  if (!names.includes('host')) return { name: 'IncompleteSignatureException', message: "'Host' must be a signed header." };
  if (identity.sessionToken && (call.headers['x-amz-security-token'] !== identity.sessionToken || !names.includes('x-amz-security-token'))) {
    return { name: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  }
  const raw = call.rawBody ?? '';
  const bodyHash = createHash('sha256').update(raw).digest('hex');
  const claimedHash = call.headers['x-amz-content-sha256'];
  if (claimedHash !== undefined && claimedHash !== bodyHash)
    return { name: 'InvalidSignatureException', message: 'The provided x-amz-content-sha256 header does not match what was computed.' };
  const headers: Record<string, string> = {};
  for (const name of names) {
    const value = call.headers[name];
    if (value === undefined) return { name: 'InvalidSignatureException', message: `Signed header ${name} is missing.` };
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  new URLSearchParams(call.rawQuery).forEach((value, name) => (query[name] = value));
  const signer = new SignatureV4({ service, region, credentials: { accessKeyId, ...identity }, sha256: Sha256 });
  const expected = await signer.sign(
    { method: call.method, protocol: 'http:', hostname: headers.host.split(':')[0], path: call.path, query, headers, body: raw },
    { signingDate, signableHeaders: new Set(names) },
  );
  const expectedSignature = /Signature=([0-9a-f]{64})/.exec(String(expected.headers.authorization))?.[1];
  if (expectedSignature !== signature) {
    return {
      name: 'InvalidSignatureException',
      message:
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    };
  }
  return null;
}

/** Every cachePoint block of a Converse body, with whether it follows another block. */
function cachePointsOf(body: any): { first: boolean; valid: boolean }[] {
  const lists = [body.system, body.toolConfig?.tools, ...(Array.isArray(body.messages) ? body.messages.map((message: any) => message?.content) : [])];
  return lists.flatMap((blocks) =>
    Array.isArray(blocks)
      ? blocks.flatMap((block: any, i: number) => (block?.cachePoint ? [{ first: i === 0, valid: block.cachePoint.type === 'default' }] : []))
      : [],
  );
}

/** Cache points only for the models that cache by them, at most 4, each after a block, of type default. */
function invalidCachePoints(body: any, model: string): string | null {
  const points = cachePointsOf(body);
  if (!points.length) return null;
  if (!/anthropic\.claude|amazon\.nova|mock-/.test(model))
    return "This model doesn't support the cachePoint field. Remove cachePoint from your request and try again.";
  if (points.length > 4) return 'A maximum of 4 cachePoint blocks is allowed per request.';
  if (points.some((point) => point.first)) return 'A cachePoint block must follow another content block.';
  if (points.some((point) => !point.valid)) return 'The value at cachePoint.type failed to satisfy constraint: Member must satisfy enum value set: [default].';
  return null;
}

/** The Converse body's first problem, as Bedrock's ValidationException words it; null when valid. */
function invalidConverse(body: any, model = ''): string | null {
  if (!body || typeof body !== 'object') return 'Malformed input request, please reformat your input and try again.';
  const cachePoints = invalidCachePoints(body, model);
  if (cachePoints) return cachePoints;
  const extra = Object.keys(body).find((field) => !CONVERSE_FIELDS.has(field));
  if (extra) return `Malformed input request: extraneous key [${extra}] is not permitted, please reformat your input and try again.`;
  if (!Array.isArray(body.messages) || !body.messages.length)
    return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
  const toolUses = new Set<string>();
  let usesTools = false;
  for (const [i, message] of body.messages.entries()) {
    const expected = i % 2 === 0 ? 'user' : 'assistant';
    if (message?.role !== expected)
      return i === 0
        ? 'A conversation must start with a user message. Try again with a conversation that starts with a user message.'
        : 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.';
    if (!Array.isArray(message.content) || !message.content.length)
      return `The content field in the Message object at messages.${i} is empty. Add a ContentBlock object to the content field and try again.`;
    for (const block of message.content) {
      const kinds = Object.keys(block ?? {});
      if (kinds.length !== 1) return `messages.${i}.content: a ContentBlock must have exactly one member.`;
      const kind = kinds[0];
      if (kind === 'text' && typeof block.text === 'string') continue;
      if (kind === 'cachePoint') continue;
      if (kind === 'image') {
        if (!IMAGE_FORMATS.has(block.image?.format)) return `messages.${i}.content.image.format: must be one of png, jpeg, gif, webp.`;
        if (typeof block.image.source?.bytes !== 'string' || !block.image.source.bytes)
          return `messages.${i}.content.image.source.bytes: must be base64 bytes.`;
        continue;
      }
      if (kind === 'document' && typeof block.document?.name === 'string' && typeof block.document.source?.bytes === 'string') continue;
      if (
        kind === 'toolUse' &&
        expected === 'assistant' &&
        typeof block.toolUse.toolUseId === 'string' &&
        typeof block.toolUse.name === 'string' &&
        typeof block.toolUse.input === 'object'
      ) {
        toolUses.add(block.toolUse.toolUseId);
        usesTools = true;
        continue;
      }
      if (kind === 'toolResult' && expected === 'user') {
        usesTools = true;
        if (!toolUses.has(block.toolResult?.toolUseId)) return 'The toolResult blocks at messages.' + i + ' must match toolUse blocks of the previous turn.';
        if (!Array.isArray(block.toolResult.content)) return `messages.${i}.content.toolResult.content: must be an array.`;
        continue;
      }
      return `messages.${i}.content: unknown or malformed ContentBlock member ${kind}.`;
    }
  }
  if (body.messages[body.messages.length - 1].role !== 'user')
    return 'A conversation must end with a user message. Try again with a conversation that ends with a user message.';
  if (usesTools && !body.toolConfig) return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
  if (body.system !== undefined && (!Array.isArray(body.system) || !body.system.every((block: any) => typeof block?.text === 'string' || block?.cachePoint)))
    return 'system: must be an array of SystemContentBlock.';
  if (body.toolConfig && (!Array.isArray(body.toolConfig.tools) || !body.toolConfig.tools.length))
    return 'The value at toolConfig.tools failed to satisfy constraint: Member must have length greater than or equal to 1.';
  return null;
}

/**
 * Claude's thinking passed through additionalModelRequestFields, as the model checks it
 * (Bedrock forwards the model's complaint in a ValidationException); other models refuse the field.
 */
function invalidThinking(body: any, model: string): string | null {
  const thinking = body.additionalModelRequestFields?.thinking;
  if (thinking === undefined) return null;
  if (!/anthropic\.claude/.test(model))
    return 'The model returned the following errors: Malformed input request: extraneous key [thinking] is not permitted, please reformat your input and try again.';
  if (thinking?.type !== 'enabled' || !Number.isInteger(thinking.budget_tokens) || thinking.budget_tokens < 1024)
    return 'The model returned the following errors: thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  const maxTokens = body.inferenceConfig?.maxTokens;
  if (typeof maxTokens !== 'number' || maxTokens <= thinking.budget_tokens)
    return 'The model returned the following errors: `max_tokens` must be greater than `thinking.budget_tokens`.';
  const temperature = body.inferenceConfig?.temperature;
  if (temperature !== undefined && temperature !== 1)
    return 'The model returned the following errors: `temperature` may only be set to 1 when thinking is enabled.';
  return null;
}

interface Plan {
  /** Claude's thinking, when additionalModelRequestFields.thinking asked for it. */
  reasoning: string | null;
  text: string | null;
  /** The toolUse blocks answered instead of text (several: parallel calls). */
  toolUses: { toolUseId: string; name: string; input: Record<string, unknown> }[];
  usage: { inputTokens: number; outputTokens: number; totalTokens: number; cacheReadInputTokens?: number; cacheWriteInputTokens?: number };
}

function plan(body: any): Plan {
  const planned = planAnswer(body);
  if (!cachePointsOf(body).length) return planned;
  const usage = { ...planned.usage, cacheReadInputTokens: 200, cacheWriteInputTokens: 50 };
  return { ...planned, usage: { ...usage, totalTokens: usage.totalTokens + 250 } };
}

function planAnswer(body: any): Plan {
  const last = body.messages[body.messages.length - 1];
  const lastText = last.content
    .filter((block: any) => typeof block.text === 'string')
    .map((block: any) => block.text)
    .join(' ')
    .trim();
  const image = last.content.find((block: any) => block.image)?.image;
  const texts: string[] = [...(body.system ?? []).map((block: any) => block.text)];
  for (const message of body.messages) for (const block of message.content) if (typeof block.text === 'string') texts.push(block.text);
  const inputTokens = Math.max(1, Math.ceil(texts.join('').length / 4));
  const tools = body.toolConfig?.tools ?? [];
  const answersTool = last.content.some((block: any) => block.toolResult);
  const script = answerToolScript(
    scriptTurns(body.messages),
    tools.map((tool: any) => tool.toolSpec?.name),
  );
  if (script && 'calls' in script) {
    const toolUses = script.calls.map((call) => ({
      toolUseId: 'tooluse_' + randomBytes(16).toString('base64url').slice(0, 22),
      name: call.name,
      input: call.arguments,
    }));
    const outputTokens = script.calls.reduce((n, call) => n + argumentFragments(call.json).length, 0);
    return { reasoning: null, text: null, toolUses, usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens } };
  }
  if (!script && tools.length && !answersTool && /weather/i.test(lastText)) {
    const name = body.toolConfig.toolChoice?.tool?.name ?? tools[0].toolSpec.name;
    return {
      reasoning: null,
      text: null,
      toolUses: [{ toolUseId: `tooluse_mock${body.messages.length}`, name, input: { location: 'Paris' } }],
      usage: { inputTokens, outputTokens: 5, totalTokens: inputTokens + 5 },
    };
  }
  let text = 'Hello from mock';
  if (script) text = script.text;
  else if (lastText.startsWith('echo:')) text = lastText.slice(5).trim();
  else if (lastText === 'system?') text = (body.system ?? []).map((block: any) => block.text).join(' | ') || 'no system';
  else if (image) text = `Image ${image.format} ${Buffer.from(image.source.bytes, 'base64').length} bytes`;
  const reasoning = body.additionalModelRequestFields?.thinking ? THINKING_TEXT : null;
  const outputTokens = `${reasoning ?? ''} ${text}`.split(/\s+/).filter(Boolean).length;
  return { reasoning, text, toolUses: [], usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens } };
}

/**
 * The conversation as the tool script reads it: a user turn without toolResult blocks is user
 * text; an assistant turn with toolUse blocks a call turn; each toolResult a result (its text and
 * json blocks, "error: " first when its status is "error").
 */
function scriptTurns(messages: any[]): ScriptTurn[] {
  const turns: ScriptTurn[] = [];
  for (const message of messages) {
    if (message.role === 'assistant') {
      if (message.content.some((block: any) => block.toolUse)) turns.push({ kind: 'calls' });
      continue;
    }
    const results = message.content.filter((block: any) => block.toolResult).map((block: any) => block.toolResult);
    if (!results.length) turns.push({ kind: 'user', text: message.content.map((block: any) => (typeof block.text === 'string' ? block.text : '')).join('') });
    for (const result of results) {
      const text = result.content
        .map((block: any) => (typeof block.text === 'string' ? block.text : block.json !== undefined ? JSON.stringify(block.json) : ''))
        .join('');
      turns.push({ kind: 'result', text: (result.status === 'error' ? 'error: ' : '') + text });
    }
  }
  return turns;
}

function answer(res: http.ServerResponse, call: MockCall, model: string, stream: boolean): void {
  const behaviour = behaviourOf(model);
  const replies = {
    error: (status: number, headers?: Record<string, string>) =>
      sendAwsError(res, status, ERROR_NAMES[status] ?? 'InternalServerException', ERROR_MESSAGES[status] ?? `Mock error (status ${status})`, headers),
    invalidJson: '{"output": this is not JSON',
  };
  if (call.badJson) return sendAwsError(res, 400, 'SerializationException', 'Unexpected character in the request body.');
  if (!model.startsWith('mock-') && !KNOWN_MODEL.test(model)) return sendAwsError(res, 400, 'ValidationException', 'The provided model identifier is invalid.');
  const invalid = invalidConverse(call.body, model) ?? invalidThinking(call.body, model);
  if (invalid) return sendAwsError(res, 400, 'ValidationException', invalid);
  const flakyKey = () => 'bedrock\u0000' + model + '\u0000' + JSON.stringify(call.body.messages.at(-1));
  if (answerFailureSwitch(res, behaviour, { stream, flakyCounters: call.flakyFailures, flakyKey }, replies)) return;
  const planned = plan(call.body);
  const stopReason = planned.toolUses.length ? 'tool_use' : 'end_turn';
  if (!stream) {
    const content: Record<string, unknown>[] = planned.toolUses.length ? planned.toolUses.map((toolUse) => ({ toolUse })) : [{ text: planned.text }];
    if (planned.reasoning) content.unshift({ reasoningContent: { reasoningText: { text: planned.reasoning, signature: 'mock-signature' } } });
    return sendJson(
      res,
      200,
      JSON.stringify({ output: { message: { role: 'assistant', content } }, stopReason, usage: planned.usage, metrics: { latencyMs: 12 } }),
      { 'x-amzn-requestid': 'mock-request-id' },
    );
  }
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'mock-request-id' });
  const frames: Buffer[] = [event('messageStart', { role: 'assistant' })];
  if (planned.toolUses.length) {
    // Each toolUse a block of its own: start (id and name), its input JSON in two pieces, stop (the last one's below).
    for (const [index, { toolUseId, name, input }] of planned.toolUses.entries()) {
      const json = JSON.stringify(input);
      if (index > 0) frames.push(event('contentBlockStop', { contentBlockIndex: index - 1 }));
      frames.push(event('contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId, name } } }));
      frames.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: json.slice(0, 5) } } }));
      frames.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: json.slice(5) } } }));
    }
  } else {
    let index = 0;
    if (planned.reasoning) {
      for (const word of planned.reasoning.split(/(?=\s)/))
        frames.push(event('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: word } } }));
      frames.push(event('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'mock-signature' } } }));
      frames.push(event('contentBlockStop', { contentBlockIndex: 0 }));
      index = 1;
    }
    const words = planned.text!.split(/(?=\s)/);
    for (const word of model === 'mock-stream-exception' ? words.slice(0, 1) : words)
      frames.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { text: word } }));
  }
  if (model === 'mock-stream-exception') {
    frames.push(
      frame(
        { ':message-type': 'exception', ':exception-type': 'modelStreamErrorException', ':content-type': 'application/json' },
        { message: 'The model stopped mid-answer (mock).', originalStatusCode: 500 },
      ),
    );
    for (const bytes of frames) res.write(bytes);
    return void res.end();
  }
  frames.push(event('contentBlockStop', { contentBlockIndex: Math.max(0, planned.toolUses.length - 1) }));
  frames.push(event('messageStop', { stopReason }));
  frames.push(event('metadata', { usage: planned.usage, metrics: { latencyMs: 12 } }));
  // Written in pieces that split frames, as the network does.
  const all = Buffer.concat(frames);
  const cut = Math.floor(all.length / 3);
  res.write(all.subarray(0, cut));
  res.write(all.subarray(cut));
  res.end();
}

function frame(headers: Record<string, string>, payload: unknown): Buffer {
  const encoded: MessageHeaders = {};
  for (const [name, value] of Object.entries(headers)) encoded[name] = { type: 'string', value };
  return Buffer.from(codec.encode({ headers: encoded, body: fromUtf8(JSON.stringify(payload)) }));
}

/** An event frame; Bedrock pads each payload with a `p` field (its length varies, to hide the content's). */
function event(type: string, payload: Record<string, unknown>): Buffer {
  return frame({ ':message-type': 'event', ':event-type': type, ':content-type': 'application/json' }, { ...payload, p: 'abcdefgh' });
}

const INVOKE_CLAUDE = /^([a-z-]+\.)?anthropic\.claude/;

/** InvokeModel / InvokeModelWithResponseStream of a Claude model: the Messages API in Bedrock's envelope. */
function invoke(res: http.ServerResponse, call: MockCall, model: string, stream: boolean): void {
  if (call.badJson) return sendAwsError(res, 400, 'SerializationException', 'Unexpected character in the request body.');
  if (!INVOKE_CLAUDE.test(model) && !model.startsWith('mock-'))
    return sendAwsError(res, 400, 'ValidationException', 'The provided model identifier is invalid.');
  const { anthropic_version: version, anthropic_beta: betas, ...messages } = call.body ?? {};
  const refuse = (message: string) => sendAwsError(res, 400, 'ValidationException', message);
  if (version !== 'bedrock-2023-05-31')
    return refuse(
      `Malformed input request: anthropic_version: ${JSON.stringify(version ?? null)} is not a supported version, please reformat your input and try again.`,
    );
  for (const field of ['model', 'stream'])
    if (field in messages) return refuse(`Malformed input request: #: extraneous key [${field}] is not permitted, please reformat your input and try again.`);
  if (betas !== undefined && !(Array.isArray(betas) && betas.every((beta) => typeof beta === 'string')))
    return refuse('Malformed input request: #/anthropic_beta: expected type: JSONArray, please reformat your input and try again.');
  const betaHeader = (betas ?? []).join(',');
  const invalid = invalidBody({ ...messages, model }, betaHeader) ?? mcpBetaMissing(messages, betaHeader);
  if (invalid) return refuse(invalid);
  // `us.anthropic.claude-mock-error-429` behaves as mock-error-429 (see mock-upstream.ts).
  const behaviourModel = model.replace(/^([a-z-]+\.)?anthropic\.claude-/, '');
  const behaviour = behaviourOf(behaviourModel);
  const replies = {
    error: (status: number, headers?: Record<string, string>) =>
      sendAwsError(res, status, ERROR_NAMES[status] ?? 'InternalServerException', ERROR_MESSAGES[status] ?? `Mock error (status ${status})`, headers),
    invalidJson: '{"id": this is not JSON',
  };
  const flakyKey = () => 'bedrock-invoke\u0000' + model + '\u0000' + JSON.stringify(messages.messages.at(-1));
  if (answerFailureSwitch(res, behaviour, { stream, flakyCounters: call.flakyFailures, flakyKey }, replies)) return;
  const reply = anthropicPlan(messages, behaviourModel);
  const message = {
    id: anthropicId('msg_bdrk_'),
    type: 'message',
    role: 'assistant',
    model: model.replace(/^([a-z-]+\.)?anthropic\./, '').replace(/-v\d+:\d+$/, ''),
    content: reply.blocks,
    stop_reason: reply.stopReason,
    stop_sequence: reply.stopSequence,
    usage: reply.usage,
  };
  if (!stream)
    return sendJson(res, 200, JSON.stringify(message), {
      'x-amzn-requestid': 'mock-request-id',
      'x-amzn-bedrock-input-token-count': String(reply.usage.input_tokens),
      'x-amzn-bedrock-output-token-count': String(reply.usage.output_tokens),
    });
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'mock-request-id' });
  const events = messageEvents(message, reply).map((sse) => JSON.parse(sse.slice(sse.indexOf('data: ') + 6).trim()) as Record<string, unknown>);
  const last = events[events.length - 1];
  last['amazon-bedrock-invocationMetrics'] = {
    inputTokenCount: reply.usage.input_tokens,
    outputTokenCount: reply.usage.output_tokens,
    invocationLatency: 120,
    firstByteLatency: 40,
  };
  const frames = events.map((data) => event('chunk', { bytes: Buffer.from(JSON.stringify(data)).toString('base64') }));
  if (behaviourModel === 'mock-stream-exception') {
    frames.splice(4);
    frames.push(
      frame(
        { ':message-type': 'exception', ':exception-type': 'modelStreamErrorException', ':content-type': 'application/json' },
        { message: 'The model stopped mid-answer (mock).', originalStatusCode: 500 },
      ),
    );
  }
  const all = Buffer.concat(frames);
  const cut = Math.floor(all.length / 2);
  res.write(all.subarray(0, cut));
  res.write(all.subarray(cut));
  res.end();
}

/** CountTokens with an InvokeModel body for Claude: `{inputTokens}`, the body checked as InvokeModel checks it. */
function countTokens(res: http.ServerResponse, call: MockCall, model: string): void {
  const refuse = (message: string) => sendAwsError(res, 400, 'ValidationException', message);
  if (call.badJson) return sendAwsError(res, 400, 'SerializationException', 'Unexpected character in the request body.');
  const body = call.body ?? {};
  const extra = Object.keys(body).find((key) => key !== 'input');
  if (extra) return refuse(`Malformed input request: #: extraneous key [${extra}] is not permitted, please reformat your input and try again.`);
  const input = body.input;
  if (!input || typeof input !== 'object' || Object.keys(input).length !== 1)
    return refuse('1 validation error detected: input must hold exactly one of invokeModel, converse');
  if (!('invokeModel' in input)) return refuse('The mock serves CountTokens for InvokeModel bodies only');
  const encoded = input.invokeModel?.body;
  if (typeof encoded !== 'string' || Object.keys(input.invokeModel).length !== 1)
    return refuse("1 validation error detected: Value at 'input.invokeModel.body' failed to satisfy constraint: Member must not be null");
  // AWS counts for foundation model ids only (an inference profile is refused), and not for every Claude model.
  if (!/^anthropic\.claude/.test(model) || model.includes('mock-no-count')) return refuse("The provided model doesn't support counting tokens.");
  let invokeBody: any;
  try {
    invokeBody = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
  } catch {
    return refuse('Malformed input request: the invokeModel body is not JSON, please reformat your input and try again.');
  }
  const { anthropic_version: version, anthropic_beta: betas, ...messages } = invokeBody ?? {};
  if (version !== 'bedrock-2023-05-31')
    return refuse(
      `Malformed input request: anthropic_version: ${JSON.stringify(version ?? null)} is not a supported version, please reformat your input and try again.`,
    );
  for (const field of ['model', 'stream'])
    if (field in messages) return refuse(`Malformed input request: #: extraneous key [${field}] is not permitted, please reformat your input and try again.`);
  if (betas !== undefined && !(Array.isArray(betas) && betas.every((beta) => typeof beta === 'string')))
    return refuse('Malformed input request: #/anthropic_beta: expected type: JSONArray, please reformat your input and try again.');
  const betaHeader = (betas ?? []).join(',');
  const invalid = invalidBody({ ...messages, model }, betaHeader) ?? mcpBetaMissing(messages, betaHeader);
  if (invalid) return refuse(invalid);
  const behaviour = behaviourOf(model.replace(/^([a-z-]+\.)?anthropic\.claude-/, ''));
  const replies = {
    error: (status: number, headers?: Record<string, string>) =>
      sendAwsError(res, status, ERROR_NAMES[status] ?? 'InternalServerException', ERROR_MESSAGES[status] ?? `Mock error (status ${status})`, headers),
    invalidJson: '{"inputTokens": this is not JSON',
  };
  const flakyKey = () => 'bedrock-count-tokens\u0000' + model;
  if (answerFailureSwitch(res, behaviour, { stream: false, flakyCounters: call.flakyFailures, flakyKey }, replies)) return;
  sendJson(res, 200, JSON.stringify({ inputTokens: countInputTokens(messages) }), { 'x-amzn-requestid': 'mock-request-id' });
}

const EMBED_MODEL = /^([a-z-]+\.)?(cohere\.embed-|amazon\.titan-embed-(text|g1-text)-)/;
const COHERE_INPUT_TYPES = new Set(['search_document', 'search_query', 'classification', 'clustering']);

/** The mock's vector for a text: numbers k/128 (exact in float32, so base64 round-trips), different per text. */
export function mockEmbeddingVector(text: string, size: number): number[] {
  const seed = [...text].reduce((sum, char) => (sum * 31 + char.charCodeAt(0)) % 9973, 7);
  return Array.from({ length: size }, (_, i) => (((seed + i * 37) % 201) - 100) / 128);
}

/** Tokens of a text as the mock counts them (about four characters a token, at least one). */
export const mockEmbeddingTokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

/** InvokeModel of a Cohere Embed or Titan Text Embeddings model, as Bedrock checks and answers it. */
function invokeEmbeddings(res: http.ServerResponse, call: MockCall, model: string): void {
  const refuse = (message: string) => sendAwsError(res, 400, 'ValidationException', message);
  if (call.badJson || !call.body || typeof call.body !== 'object')
    return sendAwsError(res, 400, 'SerializationException', 'Unexpected character in the request body.');
  const body = call.body as Record<string, any>;
  const cohere = /cohere\.embed-/.test(model);
  const v4 = /embed-v4/.test(model);
  const titanV2 = /titan-embed-text-v2/.test(model);
  const allowed = cohere
    ? ['texts', 'input_type', 'truncate', 'embedding_types', ...(v4 ? ['output_dimension'] : [])]
    : ['inputText', ...(titanV2 ? ['dimensions', 'normalize', 'embeddingTypes'] : [])];
  const extra = Object.keys(body).find((key) => !allowed.includes(key));
  if (extra) return refuse(`Malformed input request: #: extraneous key [${extra}] is not permitted, please reformat your input and try again.`);
  let texts: string[];
  let size: number;
  if (cohere) {
    if (!Array.isArray(body.texts) || !body.texts.every((text: unknown) => typeof text === 'string'))
      return refuse('Malformed input request: #/texts: expected type: JSONArray, please reformat your input and try again.');
    if (body.texts.length < 1 || body.texts.length > 96)
      return refuse(
        `Malformed input request: #/texts: expected maximum item count: 96, found: ${body.texts.length}, please reformat your input and try again.`,
      );
    if (body.texts.some((text: string) => text.length > 2048))
      return refuse('Malformed input request: #/texts: expected maxLength: 2048, please reformat your input and try again.');
    if (!COHERE_INPUT_TYPES.has(body.input_type))
      return refuse(
        `Malformed input request: #/input_type: ${JSON.stringify(body.input_type ?? null)} is not a valid enum value, please reformat your input and try again.`,
      );
    if (body.truncate !== undefined && !['NONE', 'START', 'END'].includes(body.truncate))
      return refuse('Malformed input request: #/truncate: is not a valid enum value, please reformat your input and try again.');
    if (body.embedding_types !== undefined && JSON.stringify(body.embedding_types) !== '["float"]')
      return refuse('Malformed input request: #/embedding_types: only ["float"] in this mock, please reformat your input and try again.');
    if (body.output_dimension !== undefined && ![256, 512, 1024, 1536].includes(body.output_dimension))
      return refuse('Malformed input request: #/output_dimension: is not a valid enum value, please reformat your input and try again.');
    texts = body.texts;
    size = body.output_dimension ?? (v4 ? 1536 : 1024);
  } else {
    if (typeof body.inputText !== 'string' || !body.inputText)
      return refuse('Malformed input request: #/inputText: expected minLength: 1, please reformat your input and try again.');
    if (body.dimensions !== undefined && ![256, 512, 1024].includes(body.dimensions))
      return refuse('Malformed input request: #/dimensions: 256, 512 or 1024, please reformat your input and try again.');
    if (body.normalize !== undefined && typeof body.normalize !== 'boolean')
      return refuse('Malformed input request: #/normalize: expected type: Boolean, please reformat your input and try again.');
    texts = [body.inputText];
    size = body.dimensions ?? (titanV2 ? 1024 : 1536);
  }
  if (texts.some((text) => text.includes('mock-throttle'))) return sendAwsError(res, 429, 'ThrottlingException', ERROR_MESSAGES[429]);
  const tokens = texts.reduce((sum, text) => sum + mockEmbeddingTokens(text), 0);
  const vectors = texts.map((text) => mockEmbeddingVector(text, size));
  const headers = { 'x-amzn-requestid': 'mock-request-id', 'x-amzn-bedrock-invocation-latency': '21', 'x-amzn-bedrock-input-token-count': String(tokens) };
  if (!cohere) {
    const answer: Record<string, unknown> = { embedding: vectors[0], inputTextTokenCount: tokens };
    if (titanV2) answer.embeddingsByType = { float: vectors[0] };
    return sendJson(res, 200, JSON.stringify(answer), headers);
  }
  const byType = body.embedding_types !== undefined;
  const answer = {
    id: randomUUID(),
    texts,
    embeddings: byType ? { float: vectors } : vectors,
    response_type: byType ? 'embeddings_by_type' : 'embeddings_floats',
  };
  sendJson(res, 200, JSON.stringify(answer), headers);
}

function isAssumeRole(call: MockCall): boolean {
  return (
    call.method === 'POST' &&
    String(call.headers['content-type'] ?? '').includes('application/x-www-form-urlencoded') &&
    /(^|&)Action=AssumeRole(&|$)/.test(call.rawBody ?? '')
  );
}

function sendStsError(res: http.ServerResponse, status: number, code: string, message: string): void {
  const xml = `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">\n  <Error>\n    <Type>Sender</Type>\n    <Code>${code}</Code>\n    <Message>${message}</Message>\n  </Error>\n  <RequestId>mock-sts-request-id</RequestId>\n</ErrorResponse>\n`;
  res.writeHead(status, { 'content-type': 'text/xml', 'x-amzn-requestid': 'mock-sts-request-id' });
  res.end(xml);
}

/** STS AssumeRole (query protocol in, XML out), as sts.amazonaws.com answers it. */
function serveAssumeRole(res: http.ServerResponse, call: MockCall): void {
  const form = new URLSearchParams(call.rawBody ?? '');
  const roleArn = form.get('RoleArn');
  const externalId = form.get('ExternalId');
  const signedBy = /Credential=([^/]+)\//.exec(String(call.headers.authorization ?? ''))?.[1] ?? null;
  verifySignature(call, 'sts').then(
    (refusal) => {
      const granted =
        !refusal &&
        signedBy === BEDROCK_TEST_CREDENTIALS.accessKeyId &&
        roleArn === BEDROCK_TEST_ROLE.arn &&
        externalId === BEDROCK_TEST_ROLE.externalId &&
        form.get('Version') === '2011-06-15' &&
        !!form.get('RoleSessionName');
      stsAssumeRoleCalls.push({ roleArn, externalId, signedBy, granted });
      if (refusal) return sendStsError(res, 403, refusal.name, refusal.message);
      if (!granted)
        return sendStsError(
          res,
          403,
          'AccessDenied',
          `User: arn:aws:iam::123456789012:user/${signedBy} is not authorized to perform: sts:AssumeRole on resource: ${roleArn}`,
        );
      const expiration = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const session = form.get('RoleSessionName');
      const xml = `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <AssumedRoleUser>
      <AssumedRoleId>AROAMOCKROLE000000001:${session}</AssumedRoleId>
      <Arn>arn:aws:sts::123456789012:assumed-role/bedrock-invoker/${session}</Arn>
    </AssumedRoleUser>
    <Credentials>
      <AccessKeyId>${BEDROCK_TEST_ASSUMED.accessKeyId}</AccessKeyId>
      <SecretAccessKey>${BEDROCK_TEST_ASSUMED.secretAccessKey}</SecretAccessKey>
      <SessionToken>${BEDROCK_TEST_ASSUMED.sessionToken}</SessionToken>
      <Expiration>${expiration}</Expiration>
    </Credentials>
  </AssumeRoleResult>
  <ResponseMetadata>
    <RequestId>mock-sts-request-id</RequestId>
  </ResponseMetadata>
</AssumeRoleResponse>
`;
      res.writeHead(200, { 'content-type': 'text/xml', 'x-amzn-requestid': 'mock-sts-request-id' });
      res.end(xml);
    },
    (error: unknown) => sendStsError(res, 500, 'InternalFailure', `Mock failure: ${String(error)}`),
  );
}
