/**
 * Google Vertex AI in the mock upstream (mock-upstream.ts hands every request here first;
 * `serve` answers true when it served it), with the OAuth2 token endpoint a service account
 * mints its tokens at. It checks what Google checks, so a wrong key or a made-up token fails.
 *
 * Routes:
 *   POST /token   the JWT-bearer exchange (RFC 7523): a form with grant_type
 *        `urn:ietf:params:oauth:grant-type:jwt-bearer` and `assertion`, an RS256 JWT whose
 *        signature must verify with the public key registered for its `iss`
 *        (`registerServiceAccount`), `aud` this endpoint's URL, `scope` including cloud-platform,
 *        `iat` not in the future and `exp` after now, at most an hour after `iat`. Answers
 *        {access_token: random, expires_in: TOKEN_LIFETIME_S, token_type: "Bearer"}; refusals
 *        as Google words them, 400 {error: "invalid_grant" | "invalid_scope" |
 *        "unsupported_grant_type" | "invalid_request", error_description}
 *   POST /v1/projects/{project}/locations/{region}/publishers/google/models/{model}:generateContent
 *        and :streamGenerateContent (?alt=sse): Gemini's GenerateContent, answered exactly as the
 *        Gemini mock does (mock-gemini.ts: same checks, replies, streams and model switches)
 *   POST …/publishers/google/models/{model}:countTokens  {contents, systemInstruction?, tools?,
 *        generationConfig?} (Vertex's CountTokensRequest), counted as the Gemini mock counts it
 *   POST …/publishers/google/models/{model}:predict  a text embedding model: {instances: [{content}],
 *        parameters?: {outputDimensionality}} → {predictions: [{embeddings: {values, statistics: {token_count}}}]}
 *   POST …/publishers/anthropic/models/{model}:rawPredict and :streamRawPredict: Anthropic's
 *        Messages API as Vertex takes it: `anthropic_version: "vertex-2023-10-16"` in the body
 *        (400 otherwise), no `model` in the body (the URL names it: 400 "model: Extra inputs are
 *        not permitted"), answered as the Anthropic mock does (mock-anthropic.ts); :rawPredict
 *        with `stream: true` is refused (400), as Vertex wants :streamRawPredict for a stream
 *   POST …/publishers/anthropic/models/count-tokens:rawPredict  Claude's token count: Anthropic's
 *        count_tokens body with `model` in it (400 without), `anthropic_version` optional but
 *        `vertex-2023-10-16` when given, answered as the Anthropic mock's count_tokens does
 *        ({input_tokens}, same checks and error switches)
 * Every model route wants `Authorization: Bearer <a token this mock issued and that has not
 * expired>`: 401 UNAUTHENTICATED in Google's shape otherwise. Each call's project and region are
 * recorded in `calls`.
 */
import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
import type * as http from 'node:http';
import type { MockCall } from './mock-call';
import { serveAnthropic } from './mock-anthropic';
import { mockEmbeddingValues, serveGemini } from './mock-gemini';
import { sendJson } from './mock-upstream';

export const TOKEN_LIFETIME_S = 3599;
const CLOUD_PLATFORM = 'https://www.googleapis.com/auth/cloud-platform';
const MODEL_ROUTE = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):([A-Za-z]+)$/;
const UNAUTHENTICATED =
  'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.';

export interface VertexMock {
  /** The public key the token endpoint verifies assertions of `clientEmail` with. */
  registerServiceAccount(clientEmail: string, publicKey: KeyObject | string): void;
  /** Token requests received, granted or refused. */
  tokenRequests: Array<{ granted: boolean; clientEmail: string | null; error?: string }>;
  /** Model calls that passed the token check: project, region, publisher, model, method. */
  calls: Array<{ project: string; region: string; publisher: string; model: string; method: string }>;
  /** Forget every issued token (a model call with one is then a 401, as with a revoked token). */
  revokeTokens(): void;
  serve(res: http.ServerResponse, call: MockCall, selfUrl: string): boolean;
  reset(): void;
}

export function createVertexMock(now: () => number = Date.now): VertexMock {
  const accounts = new Map<string, KeyObject>();
  const issued = new Map<string, number>();
  const mock: VertexMock = {
    registerServiceAccount(clientEmail, publicKey) {
      accounts.set(clientEmail, typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey);
    },
    tokenRequests: [],
    calls: [],
    revokeTokens: () => issued.clear(),
    reset() {
      mock.tokenRequests.length = 0;
      mock.calls.length = 0;
    },
    serve(res, call, selfUrl) {
      if (call.method === 'POST' && call.path === '/token') {
        token(res, call, selfUrl);
        return true;
      }
      const route = MODEL_ROUTE.exec(call.path);
      if (!route || call.method !== 'POST') return false;
      const bearer = /^Bearer (.+)$/.exec(String(call.headers.authorization ?? ''))?.[1];
      const expiresAt = bearer ? issued.get(bearer) : undefined;
      if (expiresAt === undefined || expiresAt <= now()) {
        sendJson(res, 401, JSON.stringify({ error: { code: 401, message: UNAUTHENTICATED, status: 'UNAUTHENTICATED' } }));
        return true;
      }
      const [, project, region, publisher, rawModel, method] = route;
      const model = decodeURIComponent(rawModel);
      mock.calls.push({ project: decodeURIComponent(project), region: decodeURIComponent(region), publisher, model, method });
      return publisher === 'google' ? gemini(res, call, model, method) : claude(res, call, model, method);
    },
  };

  function token(res: http.ServerResponse, call: MockCall, selfUrl: string): void {
    const refuse = (error: string, description: string, clientEmail: string | null = null) => {
      mock.tokenRequests.push({ granted: false, clientEmail, error: `${error}: ${description}` });
      sendJson(res, 400, JSON.stringify({ error, error_description: description }));
    };
    // The mock's body reader parses JSON only; a form arrives as the raw text it could not parse.
    const form = new URLSearchParams(typeof call.rawBody === 'string' ? call.rawBody : '');
    if (!String(call.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return refuse('invalid_request', 'Bad Request');
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer')
      return refuse('unsupported_grant_type', 'Invalid grant_type: ' + (form.get('grant_type') ?? ''));
    const parts = (form.get('assertion') ?? '').split('.');
    if (parts.length !== 3) return refuse('invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
    let header: any;
    let claims: any;
    try {
      header = JSON.parse(Buffer.from(parts[0], 'base64url').toString());
      claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString());
    } catch {
      return refuse('invalid_grant', 'Invalid JWT.');
    }
    const email = typeof claims?.iss === 'string' ? claims.iss : null;
    if (header?.alg !== 'RS256') return refuse('invalid_grant', 'Invalid JWT: unsupported algorithm.', email);
    const publicKey = email ? accounts.get(email) : undefined;
    if (!publicKey) return refuse('invalid_grant', 'Invalid grant: account not found', email);
    if (!verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), publicKey, Buffer.from(parts[2], 'base64url'))) {
      return refuse('invalid_grant', 'Invalid JWT Signature.', email);
    }
    if (claims.aud !== `${selfUrl}/token`) return refuse('invalid_grant', 'Invalid JWT audience.', email);
    const nowS = Math.floor(now() / 1000);
    if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number' || claims.iat > nowS + 60 || claims.exp <= nowS || claims.exp - claims.iat > 3600) {
      return refuse(
        'invalid_grant',
        'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.',
        email,
      );
    }
    if (typeof claims.scope !== 'string' || !claims.scope.split(' ').includes(CLOUD_PLATFORM))
      return refuse('invalid_scope', 'Invalid OAuth scope or ID token audience provided.', email);
    const accessToken = `ya29.mock-${randomBytes(24).toString('base64url')}`;
    issued.set(accessToken, now() + TOKEN_LIFETIME_S * 1000);
    mock.tokenRequests.push({ granted: true, clientEmail: email });
    sendJson(res, 200, JSON.stringify({ access_token: accessToken, expires_in: TOKEN_LIFETIME_S, token_type: 'Bearer' }));
  }

  return mock;
}

/** Gemini on Vertex: the Gemini mock's answer for the same model and method (its key check satisfied by the token). */
function gemini(res: http.ServerResponse, call: MockCall, model: string, method: string): boolean {
  if (method === 'predict') return predictEmbeddings(res, call);
  if (method === 'countTokens') return countTokens(res, call, model);
  if (method !== 'generateContent' && method !== 'streamGenerateContent') return false;
  const headers = { ...call.headers, 'x-goog-api-key': 'vertex-oauth' };
  return serveGemini(res, { ...call, path: `/v1beta/models/${encodeURIComponent(model)}:${method}`, headers });
}

/** Vertex's CountTokensRequest fields (no `generateContentRequest`, unlike the Gemini API's). */
const COUNT_TOKENS_FIELDS = new Set(['contents', 'systemInstruction', 'tools', 'generationConfig']);

/**
 * `:countTokens` of a Gemini model on Vertex: `{contents, systemInstruction?, tools?, generationConfig?}`,
 * counted as the Gemini mock counts the same request (`{totalTokens, …}`); another field: 400.
 */
function countTokens(res: http.ServerResponse, call: MockCall, model: string): boolean {
  const body = call.body ?? {};
  const extra = Object.keys(body).find((name) => !COUNT_TOKENS_FIELDS.has(name));
  if (extra) {
    sendJson(
      res,
      400,
      JSON.stringify({
        error: { code: 400, message: `Invalid JSON payload received. Unknown name "${extra}": Cannot find field.`, status: 'INVALID_ARGUMENT' },
      }),
    );
    return true;
  }
  const { generationConfig: _settings, ...counted } = body;
  const asGemini = { generateContentRequest: { model: `models/${model}`, ...counted } };
  const headers = { ...call.headers, 'x-goog-api-key': 'vertex-oauth' };
  return serveGemini(res, { ...call, body: asGemini, path: `/v1beta/models/${encodeURIComponent(model)}:countTokens`, headers });
}

/**
 * A text embedding model's `:predict`: `{instances: [{content, task_type?, title?}], parameters?: {outputDimensionality?, autoTruncate?}}`
 * → `{predictions: [{embeddings: {values: mockEmbeddingValues(content), statistics: {token_count, truncated}}}], metadata: {billableCharacterCount}}`.
 */
function predictEmbeddings(res: http.ServerResponse, call: MockCall): boolean {
  const invalid = (message: string) => {
    sendJson(res, 400, JSON.stringify({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } }));
    return true;
  };
  const body = call.body ?? {};
  const extra = Object.keys(body).find((name) => name !== 'instances' && name !== 'parameters');
  if (extra) return invalid(`Invalid JSON payload received. Unknown name "${extra}": Cannot find field.`);
  if (!Array.isArray(body.instances) || body.instances.length === 0) return invalid('instances must be a non-empty list');
  const parameters = body.parameters ?? {};
  const unknown = Object.keys(parameters).find((name) => name !== 'outputDimensionality' && name !== 'autoTruncate');
  if (unknown) return invalid(`Unknown parameter ${unknown}`);
  const instances = body.instances as any[];
  const bad = instances.findIndex(
    (instance) => typeof instance?.content !== 'string' || Object.keys(instance).some((name) => !['content', 'task_type', 'title'].includes(name)),
  );
  if (bad >= 0) return invalid(`instances[${bad}] must be {content: string, task_type?, title?}`);
  const predictions = instances.map((instance) => ({
    embeddings: {
      values: mockEmbeddingValues(instance.content, parameters.outputDimensionality),
      statistics: { token_count: Math.ceil(instance.content.length / 4), truncated: false },
    },
  }));
  const characters = instances.reduce((sum, instance) => sum + instance.content.length, 0);
  sendJson(res, 200, JSON.stringify({ predictions, metadata: { billableCharacterCount: characters } }));
  return true;
}

/** Claude on Vertex: the Anthropic mock's answer once Vertex's own rules are checked. */
function claude(res: http.ServerResponse, call: MockCall, model: string, method: string): boolean {
  if (method !== 'rawPredict' && method !== 'streamRawPredict') return false;
  if (model === 'count-tokens') return claudeCountTokens(res, call, method);
  const invalid = (message: string) => {
    sendJson(res, 400, JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message } }));
    return true;
  };
  const body = call.body;
  if (!call.badJson && body && typeof body === 'object') {
    if (body.anthropic_version !== 'vertex-2023-10-16') return invalid("anthropic_version: Input should be 'vertex-2023-10-16'");
    if ('model' in body) return invalid('model: Extra inputs are not permitted');
    if (method === 'rawPredict' && body.stream === true) return invalid('stream: use streamRawPredict for a streamed answer');
  }
  const { anthropic_version: _version, ...messages } = body ?? {};
  const headers = { ...call.headers, 'x-api-key': 'vertex-oauth', 'anthropic-version': '2023-06-01' };
  return serveAnthropic(res, { ...call, path: '/v1/messages', headers, body: call.badJson ? body : { ...messages, model } });
}

/** Claude's count-tokens on Vertex: the model in the body (not the URL), answered by the Anthropic mock's count_tokens. */
function claudeCountTokens(res: http.ServerResponse, call: MockCall, method: string): boolean {
  const invalid = (message: string) => {
    sendJson(res, 400, JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message } }));
    return true;
  };
  if (method !== 'rawPredict') return invalid('count-tokens is served by rawPredict only');
  const body = call.body;
  if (!call.badJson && body && typeof body === 'object') {
    if (body.anthropic_version !== undefined && body.anthropic_version !== 'vertex-2023-10-16')
      return invalid("anthropic_version: Input should be 'vertex-2023-10-16'");
    if (typeof body.model !== 'string' || !body.model) return invalid('model: Field required');
  }
  const { anthropic_version: _version, ...counted } = body ?? {};
  const headers = { ...call.headers, 'x-api-key': 'vertex-oauth', 'anthropic-version': '2023-06-01' };
  return serveAnthropic(res, { ...call, path: '/v1/messages/count_tokens', headers, body: call.badJson ? body : counted });
}
