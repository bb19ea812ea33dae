/**
 * Hostile input (issue 10, item 5): thousands of generated bodies, headers, paths and query
 * strings against every operation and the admin API. Never a 500, never a crash, always the
 * documented error shape (CONTRACT section 3), no stack traces, no prototype pollution; a
 * body over the limit is a 413 before it is read whole.
 *
 * Reproducible: every case comes from its own sub-seed of FUZZ_SEED.
 *   FUZZ_SEED=<n>        another run (default below); printed in every failure
 *   FUZZ_CASES=<n>       how many random cases (default 3000; the field sweep adds ~1,800)
 *   FUZZ_ONLY=<i>,<j>    only these case indices (a failure message names its index)
 *   FUZZ_LOG_LEVEL=error show the gateway's own error logs (default fatal: quiet)
 *   FUZZ_TRACE=<file>    append one line per case (route, status, what was mutated) to that file
 */
import { request as httpRequest, Agent, IncomingHttpHeaders } from 'node:http';
import { appendFileSync } from 'node:fs';
import { connect } from 'node:net';
import * as vm from 'node:vm';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';
import { call, createVirtualKey } from '../support/e2e-helpers';
import {
  caseSeed,
  deepNesting,
  edgeMutation,
  enormousString,
  hostileCursor,
  hostileDate,
  hostileEncoded,
  hostileHeaders,
  hostileMultipart,
  hostileQuery,
  incompressible,
  slotsOf,
  J,
  mutate,
  Obj,
  Raw,
  pollutionEverywhere,
  preview,
  rawBody,
  Rng,
  serialize,
  tree,
  unicodeEverywhere,
} from '../support/fuzz-inputs';

const SEED = Number(process.env.FUZZ_SEED ?? 0x5eed1005) >>> 0;
/** Random cases; the field sweep (below) adds about 1,800 more. */
const CASES = Number(process.env.FUZZ_CASES ?? 3000);
const ONLY = process.env.FUZZ_ONLY ? process.env.FUZZ_ONLY.split(',').map(Number) : null;
/** A file to append one line per case to (index, route, status, what was mutated). */
const TRACE_FILE = process.env.FUZZ_TRACE;
const CONCURRENCY = 8;
const REQUEST_TIMEOUT_MS = 20_000;

// ---------------------------------------------------------------------------------------------
// The routes and their valid-looking requests

interface Fixtures {
  mockUrl: string;
  promptId: string;
  storedResponseId: string;
  patchApiKeyId: string;
  /** A user-role key: the logs and analytics of its own requests only, no admin API. */
  userKey: string;
}

type Shape = 'openai' | 'anthropic' | 'google';

/** The error shape of a route: Google's under /v1beta/, Anthropic's on /v1/messages…, else OpenAI's. */
const shapeOf = (path: string): Shape => (path.startsWith('/v1beta/') ? 'google' : path.startsWith('/v1/messages') ? 'anthropic' : 'openai');

interface RouteSpec {
  name: string;
  /** Cases per 100. */
  weight: number;
  method: string;
  shape: Shape;
  /** A provider may answer (so 502/503/504 can be legitimate). */
  upstream: boolean;
  path(rng: Rng, fx: Fixtures): string;
  /** A valid-looking body (plain JS), mutated by the fuzzer. */
  body?(rng: Rng, fx: Fixtures, tag: string): Record<string, unknown>;
  /** An upload route: the text fields of a valid form (plus a file part), sent as hostile multipart (hostileMultipart). */
  form?(rng: Rng, path: string): Record<string, string>;
  /** The routing headers a well-formed call would send. */
  headers?(rng: Rng, fx: Fixtures): Record<string, string>;
}

const maybe = <T>(rng: Rng, p: number, value: () => T): T | undefined => (rng.chance(p) ? value() : undefined);
/** A random subset of the fields (each kept with probability p), undefined ones dropped. */
function some(rng: Rng, fields: Record<string, unknown>, p = 0.6): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && rng.chance(p)));
}
const defined = (fields: Record<string, unknown>) => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));

const VK = 'fuzz-openai';
const VK_ANTHROPIC = 'fuzz-anthropic';
const VK_COHERE = 'fuzz-cohere';
const VK_GEMINI = 'fuzz-gemini';

/** How a model operation is routed: virtual key header (mostly), the @slug/model prefix, or a provider header. */
function modelRouting(rng: Rng, fx: Fixtures, slug = VK): Record<string, string> {
  const way = rng.weighted<string>([
    [8, 'vk'],
    [1, 'prefix'],
    [1, 'provider'],
  ]);
  if (way === 'prefix') return {};
  if (way === 'provider') return { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-fuzz', 'x-gateway-custom-host': `${fx.mockUrl}/v1` };
  return { 'x-gateway-virtual-key': slug };
}

const HELLO_TOOL = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } },
};

/** A Gemini route's `{model}`: routed by its slug to Gemini (natively) or translated to OpenAI or Anthropic; now and then hostile. */
function geminiModel(rng: Rng): string {
  if (rng.chance(0.05)) return hostileEncoded(rng);
  return rng.pick([`@${VK_GEMINI}/gemini-2.5-flash`, `@${VK}/gpt-4o-mini`, `@${VK_ANTHROPIC}/claude-sonnet-4-5`]);
}

const GEMINI_CONTENTS = [
  { role: 'user', parts: [{ text: 'What is the weather in Paris?' }] },
  { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { location: 'Paris' } } }] },
  { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'sunny' } } }] },
];

const ROUTES: RouteSpec[] = [
  {
    name: 'POST /v1beta/models/{model}:generateContent',
    weight: 7,
    method: 'POST',
    shape: 'google',
    upstream: true,
    path: (rng) =>
      `/v1beta/models/${geminiModel(rng)}:${rng.pick(['generateContent', 'streamGenerateContent?alt=sse', 'streamGenerateContent', `generateContent?key=${'gk-test-admin-key-0123456789'}`])}`,
    body: (rng) =>
      defined({
        contents: rng.pick<unknown>([[{ role: 'user', parts: [{ text: 'Say hello' }] }], GEMINI_CONTENTS]),
        systemInstruction: maybe(rng, 0.5, () => rng.pick<unknown>(['Be brief', { parts: [{ text: 'Be brief' }] }])),
        tools: maybe(rng, 0.4, () => [
          {
            functionDeclarations: [
              { name: 'get_weather', description: 'Weather', parameters: { type: 'OBJECT', properties: { location: { type: 'STRING' } } } },
            ],
          },
        ]),
        toolConfig: maybe(rng, 0.2, () => ({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } })),
        generationConfig: maybe(rng, 0.7, () =>
          some(rng, {
            temperature: 0.2,
            topP: 0.9,
            topK: 5,
            maxOutputTokens: 32,
            stopSequences: ['\n\n'],
            candidateCount: 1,
            responseMimeType: 'application/json',
            responseSchema: { type: 'OBJECT', properties: { a: { type: 'STRING', nullable: true } } },
            thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
          }),
        ),
        safetySettings: maybe(rng, 0.3, () => [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }]),
      }),
  },
  {
    name: 'POST /v1beta/models/{model}:countTokens|embedContent|batchEmbedContents',
    weight: 3,
    method: 'POST',
    shape: 'google',
    upstream: true,
    path: (rng) => `/v1beta/models/${geminiModel(rng)}:${rng.pick(['countTokens', 'embedContent', 'batchEmbedContents'])}`,
    body: (rng) =>
      defined({
        contents: maybe(rng, 0.4, () => GEMINI_CONTENTS),
        generateContentRequest: maybe(rng, 0.2, () => ({ model: 'models/gemini-2.5-flash', contents: GEMINI_CONTENTS })),
        content: maybe(rng, 0.4, () => ({ parts: [{ text: 'embed me' }] })),
        requests: maybe(rng, 0.4, () => [{ model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] }, outputDimensionality: 4 }]),
      }),
  },
  {
    name: 'POST /v1/chat/completions',
    weight: 14,
    method: 'POST',
    shape: 'openai',
    upstream: true,
    path: () => '/v1/chat/completions',
    // A fifth to Cohere: its translation gets the same hostile input.
    headers: (rng, fx) => modelRouting(rng, fx, rng.chance(0.2) ? VK_COHERE : VK),
    body: (rng) => {
      const stream = rng.chance(0.2);
      return defined({
        model: rng.pick(['gpt-4o-mini', 'gpt-4o', 'o3-mini', `@${VK}/gpt-4o-mini`]),
        messages: [
          { role: 'system', content: 'Be brief' },
          { role: 'user', content: rng.pick<unknown>(['Say hello', 'echo: hi there', [{ type: 'text', text: 'hi' }], 'What is the weather?']) },
        ],
        max_tokens: 16,
        temperature: 0.2,
        top_p: 1,
        n: maybe(rng, 0.3, () => 2),
        stream,
        stream_options: stream ? { include_usage: true } : undefined,
        user: 'fuzz-user',
        metadata: { k: 'v' },
        stop: ['\n\n'],
        seed: 1,
        tools: maybe(rng, 0.3, () => [HELLO_TOOL]),
        response_format: maybe(rng, 0.2, () => ({ type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', properties: {} } } })),
        reasoning_effort: maybe(rng, 0.1, () => 'low'),
        logprobs: maybe(rng, 0.1, () => false),
      });
    },
  },
  {
    name: 'POST /v1/responses',
    weight: 9,
    method: 'POST',
    shape: 'openai',
    upstream: true,
    path: () => '/v1/responses',
    // A third to Anthropic: the Responses API bridged through chat completions gets the same hostile input.
    headers: (rng, fx) => modelRouting(rng, fx, rng.chance(0.35) ? VK_ANTHROPIC : VK),
    body: (rng) =>
      defined({
        model: rng.pick(['gpt-4.1-mini', 'gpt-4o-mini', `@${VK}/gpt-4.1-mini`]),
        input: rng.pick<unknown>([
          'Say hello',
          [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
          [
            { role: 'user', content: 'hi' },
            { type: 'function_call_output', call_id: 'call_1', output: '{}' },
          ],
        ]),
        instructions: 'Be brief',
        max_output_tokens: 32,
        temperature: 0.5,
        store: rng.chance(0.5),
        stream: rng.chance(0.2),
        metadata: { k: 'v' },
        user: 'fuzz-user',
        parallel_tool_calls: true,
        reasoning: maybe(rng, 0.2, () => ({ effort: 'low' })),
        text: maybe(rng, 0.2, () => ({ format: { type: 'text' } })),
        tools: maybe(rng, 0.4, () => [
          rng.pick<unknown>([
            { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: false },
            { type: 'web_search_preview', search_context_size: 'low', user_location: { type: 'approximate', country: 'FR' } },
            { type: 'file_search', vector_store_ids: ['vs_1'], max_num_results: 5 },
            { type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.com/sse', require_approval: 'never', headers: { Authorization: 'Bearer t' } },
          ]),
        ]),
        tool_choice: maybe(rng, 0.2, () => 'auto'),
      }),
  },
  {
    name: 'POST /v1/messages',
    weight: 9,
    method: 'POST',
    shape: 'anthropic',
    upstream: true,
    path: () => '/v1/messages',
    headers: (rng, fx) => ({
      ...modelRouting(rng, fx, rng.chance(0.7) ? VK_ANTHROPIC : VK),
      ...(rng.chance(0.3) ? { 'vendor-version': '2023-06-01' } : {}),
    }),
    body: (rng) =>
      defined({
        model: rng.pick(['claude-sonnet-4-5', 'claude-3-5-haiku-latest', 'gpt-4o-mini']),
        max_tokens: 32,
        messages: [{ role: 'user', content: rng.pick<unknown>(['Hello', [{ type: 'text', text: 'Hello' }]]) }],
        system: rng.pick<unknown>(['Be brief', [{ type: 'text', text: 'Be brief' }]]),
        temperature: 0.5,
        top_p: 0.9,
        top_k: 5,
        stop_sequences: ['\n\nHuman:'],
        metadata: { user_id: 'fuzz-user' },
        stream: rng.chance(0.2),
        tools: maybe(rng, 0.3, () => [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: {} } }]),
        tool_choice: maybe(rng, 0.2, () => ({ type: 'auto' })),
        mcp_servers: maybe(rng, 0.15, () => [
          {
            type: 'url',
            url: 'https://mcp.example.com/sse',
            name: 'docs',
            authorization_token: 'tok',
            tool_configuration: { enabled: true, allowed_tools: ['a'] },
          },
        ]),
      }),
  },
  {
    name: 'POST /v1/messages/count_tokens',
    weight: 4,
    method: 'POST',
    shape: 'anthropic',
    upstream: true,
    path: () => '/v1/messages/count_tokens',
    headers: (rng, fx) => modelRouting(rng, fx, rng.chance(0.5) ? VK_ANTHROPIC : VK),
    body: (rng) =>
      defined({
        model: rng.pick(['claude-sonnet-4-5', 'gpt-4o-mini']),
        messages: [
          {
            role: 'user',
            content: rng.pick<unknown>([
              'Hello',
              [
                { type: 'text', text: 'Hello' },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
              ],
            ]),
          },
        ],
        system: maybe(rng, 0.5, () => rng.pick<unknown>(['Be brief', [{ type: 'text', text: 'Be brief' }]])),
        tools: maybe(rng, 0.3, () => [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: {} } }]),
        thinking: maybe(rng, 0.2, () => ({ type: 'enabled', budget_tokens: 1024 })),
      }),
  },
  {
    name: 'POST /v1/embeddings',
    weight: 7,
    method: 'POST',
    shape: 'openai',
    upstream: true,
    path: () => '/v1/embeddings',
    headers: modelRouting,
    body: (rng) =>
      defined({
        model: 'text-embedding-3-small',
        input: rng.pick<unknown>(['hello', ['a', 'b'], [1, 2, 3], [[1, 2], [3]]]),
        encoding_format: rng.pick(['float', 'base64']),
        dimensions: maybe(rng, 0.3, () => 8),
        user: 'fuzz-user',
      }),
  },
  {
    name: 'POST /v1/rerank',
    weight: 4,
    method: 'POST',
    shape: 'openai',
    upstream: true,
    path: () => '/v1/rerank',
    headers: (rng, fx) => modelRouting(rng, fx, VK_COHERE),
    body: (rng) =>
      defined({
        model: 'rerank-v3.5',
        query: rng.pick(['weather in Paris', 'cats']),
        documents: rng.pick<unknown>([
          ['Paris is sunny', 'Cats sleep'],
          [{ text: 'Paris is sunny' }, 'Cats sleep', 'Berlin'],
        ]),
        top_n: maybe(rng, 0.5, () => 1),
        return_documents: maybe(rng, 0.5, () => rng.chance(0.5)),
        user: 'fuzz-user',
      }),
  },
  {
    name: 'POST /v1/files|audio (multipart)',
    weight: 5,
    method: 'POST',
    shape: 'openai',
    upstream: true,
    path: (rng) => rng.pick(['/v1/files', '/v1/audio/transcriptions', '/v1/audio/translations']),
    headers: modelRouting,
    form: (rng, path): Record<string, string> =>
      path === '/v1/files'
        ? { purpose: rng.pick(['fine-tune', 'batch', 'assistants', '']) }
        : {
            model: rng.pick(['whisper-1', 'gpt-4o-transcribe', `@${VK}/whisper-1`]),
            ...(rng.chance(0.5) ? { response_format: rng.pick(['json', 'text', 'verbose_json', 'srt']) } : {}),
          },
  },
  {
    name: 'POST /v1/images/generations',
    weight: 6,
    method: 'POST',
    shape: 'openai',
    upstream: true,
    path: () => '/v1/images/generations',
    headers: modelRouting,
    body: (rng) =>
      defined({
        model: rng.pick(['gpt-image-1', 'dall-e-3']),
        prompt: 'A watercolour lighthouse',
        n: 1,
        size: '1024x1024',
        quality: rng.pick(['low', 'standard', 'auto']),
        response_format: maybe(rng, 0.3, () => 'b64_json'),
        style: maybe(rng, 0.2, () => 'vivid'),
        background: maybe(rng, 0.2, () => 'auto'),
        output_format: maybe(rng, 0.2, () => 'png'),
        user: 'fuzz-user',
        stream: maybe(rng, 0.1, () => false),
      }),
  },
  {
    name: 'POST /v1/prompts/{id}/completions',
    weight: 7,
    method: 'POST',
    shape: 'openai',
    upstream: true,
    path: (rng, fx) => {
      const id = rng.weighted<string>([
        [6, 'fuzz-run-prompt'],
        [2, fx.promptId],
        [2, hostileEncoded(rng)],
      ]);
      const query = rng.chance(0.2) ? `?version=${rng.pick(['1', '0', '-1', '2147483648', '1e3', '1.5', 'x', hostileEncoded(rng)])}` : '';
      return `/v1/prompts/${id}/completions${query}`;
    },
    headers: (rng, fx) => (rng.chance(0.2) ? modelRouting(rng, fx) : {}),
    body: (rng) =>
      defined({
        variables: { customer: 'Ada', question: 'Why?' },
        max_tokens: 16,
        temperature: 0.3,
        metadata: { k: 'v' },
        user: 'fuzz-user',
        stream: maybe(rng, 0.15, () => true),
        version: maybe(rng, 0.2, () => 1),
        stop: maybe(rng, 0.2, () => ['\n']),
      }),
  },
  {
    name: 'GET|DELETE /v1/responses/{id}',
    weight: 5,
    method: 'GET',
    shape: 'openai',
    upstream: true,
    path: (rng, fx) => {
      const id = rng.weighted<string>([
        [5, hostileEncoded(rng)],
        [2, fx.storedResponseId],
        [2, `resp_${rng.int(1e9)}`],
      ]);
      const suffix = rng.chance(0.15) ? '/input_items' : '';
      const query = rng.chance(0.4)
        ? `?${hostileQuery(rng, { include: () => rng.pick(['reasoning.encrypted_content', hostileEncoded(rng)]), starting_after: () => rng.pick(['1', '-1', hostileEncoded(rng)]), after: () => hostileEncoded(rng), limit: () => rng.pick(['1', '0', '101', hostileEncoded(rng)]), order: () => rng.pick(['asc', 'desc', hostileEncoded(rng)]) })}`
        : '';
      return `/v1/responses/${id}${suffix}${query}`;
    },
    headers: modelRouting,
  },
  // The admin API
  {
    name: 'POST /v1/api-keys',
    weight: 3,
    method: 'POST',
    shape: 'openai',
    upstream: false,
    path: () => '/v1/api-keys',
    body: (rng) => ({
      name: 'fuzz key',
      role: rng.pick(['user', 'admin']),
      ...some(rng, {
        budget_limit_usd: 10.5,
        budget_period: 'monthly',
        rate_limits: [
          { type: 'requests', unit: 'rpm', value: 100 },
          { type: 'tokens', unit: 'rpd', value: 100000 },
        ],
        expires_at: '2099-01-01T00:00:00Z',
        metadata: { team: 'fuzz' },
      }),
    }),
  },
  {
    name: 'PATCH /v1/api-keys/{id}',
    weight: 2,
    method: 'PATCH',
    shape: 'openai',
    upstream: false,
    path: (rng, fx) => `/v1/api-keys/${rng.chance(0.8) ? fx.patchApiKeyId : hostileEncoded(rng)}`,
    body: (rng) =>
      some(rng, {
        name: 'renamed',
        role: 'user',
        budget_limit_usd: 3,
        budget_period: 'daily',
        rate_limits: [{ type: 'requests', unit: 'rph', value: 10 }],
        expires_at: '2099-06-01T00:00:00.000Z',
        metadata: { team: 'x' },
      }),
  },
  {
    name: 'POST /v1/virtual-keys',
    weight: 3,
    method: 'POST',
    shape: 'openai',
    upstream: false,
    path: () => '/v1/virtual-keys',
    body: (rng, _fx, tag) => ({
      name: 'fuzz vk',
      slug: `fz-vk-${tag}`,
      provider: rng.pick(['openai', 'anthropic', 'azure-openai', 'openai-compatible', 'groq']),
      key: 'sk-fuzz-credential-0000',
      custom_host: 'http://127.0.0.1:9/v1',
      ...some(rng, {
        provider_organization: 'org-1',
        provider_project: 'proj-1',
        provider_options: { api_version: '2024-10-21', deployment: 'dep' },
        allowed_models: ['gpt-4o-mini'],
        budget_limit_usd: 5,
        budget_period: 'daily',
        rate_limits: [{ type: 'requests', unit: 'rpm', value: 60 }],
        expires_at: '2099-01-01T00:00:00Z',
      }),
    }),
  },
  {
    name: 'PATCH /v1/virtual-keys/{id}',
    weight: 2,
    method: 'PATCH',
    shape: 'openai',
    upstream: false,
    path: (rng) => `/v1/virtual-keys/${rng.chance(0.8) ? 'fuzz-patch-vk' : hostileEncoded(rng)}`,
    body: (rng) =>
      some(rng, {
        name: 'renamed',
        key: 'sk-new-credential',
        provider: 'openai',
        custom_host: 'http://127.0.0.1:9/v1',
        provider_organization: 'org-2',
        allowed_models: ['gpt-4o'],
        disabled: false,
        budget_limit_usd: 1,
        expires_at: '2099-01-01T00:00:00Z',
      }),
  },
  {
    name: 'POST /v1/configs',
    weight: 3,
    method: 'POST',
    shape: 'openai',
    upstream: false,
    path: () => '/v1/configs',
    body: (rng, fx, tag) => ({
      name: 'fuzz config',
      slug: `fz-config-${tag}`,
      config: {
        strategy: { mode: 'fallback', on_status_codes: [429, 500, 502] },
        retry: { attempts: 1, on_status_codes: [429] },
        request_timeout: 5000,
        ...some(rng, { cache: { mode: 'simple', max_age: 60 }, override_params: { max_tokens: 16 }, weight: 1, name: 'root' }),
        targets: [{ virtual_key: VK }, { provider: 'openai', api_key: 'sk-fuzz', custom_host: `${fx.mockUrl}/v1` }],
      },
    }),
  },
  {
    name: 'PATCH /v1/configs/{id}',
    weight: 2,
    method: 'PATCH',
    shape: 'openai',
    upstream: false,
    path: (rng) => `/v1/configs/${rng.chance(0.8) ? 'fuzz-patch-config' : hostileEncoded(rng)}`,
    body: (rng) => some(rng, { name: 'renamed', config: { virtual_key: VK, retry: { attempts: 2 }, override_params: { temperature: 0.1 } } }, 0.7),
  },
  {
    name: 'POST /v1/prompts',
    weight: 3,
    method: 'POST',
    shape: 'openai',
    upstream: false,
    path: () => '/v1/prompts',
    body: (rng, _fx, tag) => ({
      name: 'fuzz prompt',
      slug: `fz-prompt-${tag}`,
      model: 'gpt-4o-mini',
      virtual_key: VK,
      messages: [
        { role: 'system', content: 'You help {{customer}}.' },
        { role: 'user', content: rng.pick<unknown>(['{{question}}', [{ type: 'text', text: '{{question}}' }]]) },
      ],
      ...some(rng, { variables: { customer: 'Ada' }, hyperparameters: { max_tokens: 16, temperature: 0.5, tools: [HELLO_TOOL] }, provider: 'openai' }),
    }),
  },
  {
    name: 'PATCH /v1/prompts/{id}',
    weight: 2,
    method: 'PATCH',
    shape: 'openai',
    upstream: false,
    path: (rng) => `/v1/prompts/${rng.chance(0.8) ? 'fuzz-patch-prompt' : hostileEncoded(rng)}`,
    body: (rng) =>
      some(rng, {
        name: 'renamed',
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'Hi {{name}}' }],
        variables: { name: 'x' },
        hyperparameters: { top_p: 0.5 },
      }),
  },
  {
    name: 'POST /v1/prompts/{id}/render',
    weight: 1,
    method: 'POST',
    shape: 'openai',
    upstream: false,
    path: (rng) => `/v1/prompts/${rng.chance(0.8) ? 'fuzz-run-prompt' : hostileEncoded(rng)}/render`,
    body: () => ({ variables: { customer: 'Ada', question: 'Why?' }, max_tokens: 8 }),
  },
  {
    name: 'POST /v1/end-users',
    weight: 2,
    method: 'POST',
    shape: 'openai',
    upstream: false,
    path: () => '/v1/end-users',
    body: (rng, _fx, tag) => ({ user: `fz-user-${tag}`, ...some(rng, { budget_limit_usd: 5, budget_period: 'weekly', metadata: { team: 'x' } }) }),
  },
  {
    name: 'PATCH /v1/end-users/{id}',
    weight: 2,
    method: 'PATCH',
    shape: 'openai',
    upstream: false,
    path: (rng) => `/v1/end-users/${rng.chance(0.8) ? 'fuzz-patch-user' : hostileEncoded(rng)}`,
    body: (rng) => some(rng, { budget_limit_usd: 50, budget_period: 'monthly', metadata: { team: 'y' } }),
  },
  {
    name: 'GET /v1/logs',
    weight: 7,
    method: 'GET',
    shape: 'openai',
    upstream: false,
    path: (rng) => {
      if (rng.chance(0.15)) return `/v1/logs/${hostileEncoded(rng)}`;
      const intish = (r: Rng) => r.pick(['1', '50', '500', '501', '0', '-1', '1.5', '1e2', ' 7 ', '0x10', '99999999999999999999', '-0', '']);
      const text = (r: Rng) => (r.chance(0.3) ? r.pick(['gpt-4o-mini', 'openai', 'chat.completions', 'fuzz-user']) : hostileEncoded(r));
      return `/v1/logs?${hostileQuery(rng, {
        limit: intish,
        cursor: hostileCursor,
        user: text,
        model: text,
        provider: text,
        status: intish,
        trace_id: text,
        api_key_id: (r) => r.pick(['00000000-0000-0000-0000-000000000000', hostileEncoded(r)]),
        virtual_key: (r) => r.pick([VK, hostileEncoded(r)]),
        operation: text,
        from: hostileDate,
        to: hostileDate,
        include_bodies: (r) => r.pick(['true', 'false', '0', 'yes', 'maybe', hostileEncoded(r)]),
        'metadata.k': text,
        'metadata.__proto__': text,
        'metadata.%00': text,
        'metadata.': text,
        [`metadata.${hostileEncoded(rng)}`]: text,
      })}`;
    },
  },
  {
    name: 'GET /v1/analytics/summary',
    weight: 5,
    method: 'GET',
    shape: 'openai',
    upstream: false,
    path: (rng) => {
      const groups = [
        'user',
        'model',
        'provider',
        'virtual_key',
        'api_key',
        'operation',
        'metadata.k',
        'metadata.__proto__',
        'metadata.',
        `metadata.${'x'.repeat(101)}`,
        'metadata.a.b',
        'metadata.a-b',
      ];
      const query = hostileQuery(rng, { group_by: (r) => (r.chance(0.6) ? r.pick(groups) : hostileEncoded(r)), from: hostileDate, to: hostileDate });
      return `/v1/analytics/summary?${rng.chance(0.6) ? `group_by=${rng.pick(groups)}&` : ''}${query}`;
    },
  },
  {
    name: 'GET /v1/analytics/batches',
    weight: 2,
    method: 'GET',
    shape: 'openai',
    upstream: false,
    path: (rng) => {
      if (rng.chance(0.3)) return `/v1/analytics/batches/${rng.chance(0.3) ? `batch_${'0'.repeat(32)}` : hostileEncoded(rng)}`;
      const statuses = ['in_progress', 'completed,cancelled', 'running', 'completed,', ',', 'in_progress,in_progress'];
      return `/v1/analytics/batches?${hostileQuery(rng, {
        status: (r) => (r.chance(0.5) ? r.pick(statuses) : hostileEncoded(r)),
        shape: (r) => r.pick(['openai', 'anthropic', 'gemini', hostileEncoded(r)]),
        api_key_id: (r) => r.pick(['00000000-0000-0000-0000-000000000000', hostileEncoded(r)]),
        limit: (r) => r.pick(['1', '0', '501', '-1', 'x', hostileEncoded(r)]),
        cursor: (r) => r.pick([`99999999999999999~batch_${'f'.repeat(32)}`, `0~msgbatch_${'0'.repeat(32)}`, hostileCursor(r)]),
        from: hostileDate,
        to: hostileDate,
      })}`;
    },
  },
  {
    name: 'GET|DELETE admin resources',
    weight: 4,
    method: 'GET',
    shape: 'openai',
    upstream: false,
    path: (rng) => {
      const resource = rng.pick(['api-keys', 'virtual-keys', 'configs', 'prompts', 'end-users']);
      return rng.weighted<string>([
        [3, `/v1/${resource}?${hostileQuery(rng, { limit: (r) => r.pick(['1', '0', '501', '-1', 'x', hostileEncoded(r)]), cursor: hostileCursor })}`],
        [3, `/v1/${resource}/${hostileEncoded(rng)}`],
        [
          1,
          `/v1/${rng.pick(['configs/fuzz-patch-config', 'prompts/fuzz-patch-prompt'])}?version=${rng.pick(['0', '-1', '1.5', '2147483648', '99999999999999999999', hostileEncoded(rng)])}`,
        ],
        [
          1,
          `/v1/${rng.pick(['configs/fuzz-patch-config', 'prompts/fuzz-patch-prompt'])}/versions?${hostileQuery(rng, { cursor: (r) => r.pick(['0', '-1', '1.5', '2147483648', hostileCursor(r)]), limit: (r) => r.pick(['1', '0', hostileEncoded(r)]) })}`,
        ],
      ]);
    },
  },
  // Operations added later (fine-tuning jobs, models, vector stores): the same promise, lighter weight.
  {
    name: 'POST /v1/fine_tuning/jobs',
    weight: 1,
    method: 'POST',
    shape: 'openai',
    upstream: true,
    path: () => '/v1/fine_tuning/jobs',
    headers: modelRouting,
    body: (rng) =>
      defined({
        model: 'gpt-4o-mini-2024-07-18',
        training_file: 'file-abc123',
        validation_file: maybe(rng, 0.3, () => 'file-def456'),
        suffix: 'fuzz',
        seed: 42,
        hyperparameters: maybe(rng, 0.5, () => ({ n_epochs: 2, batch_size: 'auto', learning_rate_multiplier: 0.5 })),
        metadata: maybe(rng, 0.3, () => ({ k: 'v' })),
        method: maybe(rng, 0.2, () => ({ type: 'supervised', supervised: { hyperparameters: { n_epochs: 1 } } })),
      }),
  },
  {
    name: 'POST /v1/batches',
    weight: 1,
    method: 'POST',
    shape: 'openai',
    upstream: false,
    path: () => '/v1/batches',
    headers: (rng, fx) => modelRouting(rng, fx),
    body: (rng) =>
      defined({
        input_file_id: rng.pick(['file-gw0123456789abcdef0123456789abcdef', 'file-abc123']),
        endpoint: rng.pick(['/v1/chat/completions', '/v1/embeddings', '/v1/responses', '/v1/moderations']),
        completion_window: rng.pick(['24h', '1h', '7d', '8d']),
        metadata: maybe(rng, 0.3, () => ({ job: 'fuzz' })),
      }),
  },
  {
    name: 'POST /v1/messages/batches',
    weight: 1,
    method: 'POST',
    shape: 'anthropic',
    upstream: false,
    path: () => '/v1/messages/batches',
    headers: (rng, fx) => modelRouting(rng, fx, VK_ANTHROPIC),
    body: (rng) => ({
      requests: [
        { custom_id: rng.pick(['a', 'b-1', 'c_2']), params: { model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] } },
      ],
    }),
  },
  {
    name: 'POST /v1/vector_stores[/{id}/search|files]',
    weight: 1,
    method: 'POST',
    shape: 'openai',
    upstream: true,
    path: (rng) =>
      rng.pick([
        '/v1/vector_stores',
        `/v1/vector_stores/${rng.pick(['vs_abc123', hostileEncoded(rng)])}`,
        `/v1/vector_stores/${rng.pick(['vs_abc123', hostileEncoded(rng)])}/search`,
      ]),
    headers: modelRouting,
    body: (rng) =>
      defined({
        name: 'Support articles',
        file_ids: ['file-abc123'],
        metadata: { k: 'v' },
        query: rng.pick<unknown>(['How do I reset my password?', ['a', 'b']]),
        max_num_results: maybe(rng, 0.5, () => 5),
        expires_after: maybe(rng, 0.3, () => ({ anchor: 'last_active_at', days: 7 })),
        chunking_strategy: maybe(rng, 0.3, () => ({ type: 'auto' })),
      }),
  },
  {
    name: 'GET|DELETE fine-tuning, models, vector stores',
    weight: 1,
    method: 'GET',
    shape: 'openai',
    upstream: true,
    path: (rng) => {
      const id = rng.chance(0.7) ? hostileEncoded(rng) : rng.pick(['ftjob-abc123', 'gpt-4o-mini', 'vs_abc123']);
      const query = rng.chance(0.4)
        ? `?${hostileQuery(rng, { after: hostileEncoded, limit: (r) => r.pick(['1', '0', '-1', '1e3', hostileEncoded(r)]), order: (r) => r.pick(['asc', hostileEncoded(r)]), metadata: hostileEncoded })}`
        : '';
      return rng.pick([
        `/v1/fine_tuning/jobs${query}`,
        `/v1/fine_tuning/jobs/${id}`,
        `/v1/fine_tuning/jobs/${id}/events${query}`,
        `/v1/fine_tuning/jobs/${id}/checkpoints${query}`,
        `/v1/models${query}`,
        `/v1/models/${id}`,
        `/v1/vector_stores${query}`,
        `/v1/vector_stores/${id}`,
        `/v1/vector_stores/${id}/files${query}`,
      ]);
    },
    headers: modelRouting,
  },
  {
    name: 'other methods and unknown routes',
    weight: 2,
    method: 'PUT',
    shape: 'openai',
    upstream: true,
    path: (rng) =>
      rng.pick([
        '/v1/chat/completions',
        '/v1/api-keys',
        '/v1/logs',
        '/v1',
        '/v1/',
        '/v1/chat',
        '/v1/nope',
        `/v1/${hostileEncoded(rng)}`,
        '/v1/chat/completions/',
        '/V1/CHAT/COMPLETIONS',
        '//v1//chat//completions',
        '/v1/./chat/../chat/completions',
        '/v1/%2e%2e/health',
        '/v1/api-keys/../configs',
      ]),
    headers: modelRouting,
  },
];

// ---------------------------------------------------------------------------------------------
// Cases

interface FuzzCase {
  index: number;
  seed: number;
  route: RouteSpec;
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body: Buffer | null;
  /** Sent with chunked transfer encoding in two writes instead of Content-Length. */
  chunked: boolean;
  notes: string[];
  /** The error shape expected from this path. */
  shape: Shape;
  upstream: boolean;
}

/** The routes in a fixed, seed-shuffled rotation that respects their weights. */
function schedule(seed: number): RouteSpec[] {
  const list = ROUTES.flatMap((route) => Array.from({ length: route.weight }, () => route));
  const rng = new Rng(seed ^ 0xa5a5a5a5);
  for (let i = list.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
}

/**
 * The sweep: besides the random cases, every field of every body, nested ones included (the
 * fullest valid body: all optional fields present), set to each of a few values, one at a
 * time, the rest valid. Case indices from SWEEP_BASE on, stable whatever FUZZ_CASES is.
 */
const SWEEP_BASE = 1_000_000;
const SWEEP_VALUES: [string, J][] = [
  ['null', null],
  ['1e-7', new Raw('1e-7')],
  ['"\\u0000"', '\u0000'],
  ['[]', []],
  ['{"__proto__":{"polluted":1}}', new Obj([['__proto__', new Obj([['polluted', 1]])]])],
  ['6000 incompressible characters', incompressible(new Rng(6000), 6000)],
];

/** An Rng that takes every optional field and the first of every choice: the fullest valid request. */
class FullRng extends Rng {
  override chance(): boolean {
    return true;
  }
  override pick<T>(items: readonly T[]): T {
    return items[0];
  }
  override weighted<T>(table: readonly (readonly [number, T])[]): T {
    return table[0][1];
  }
}

/** Every (route, place in its fullest body) of the sweep, by the index of the place in slotsOf(). */
function sweepFields(fx: Fixtures): { route: RouteSpec; slot: number }[] {
  return ROUTES.filter((route) => route.body).flatMap((route) => slotsOf(tree(route.body!(new FullRng(0), fx, 'sweep'))).map((_, slot) => ({ route, slot })));
}

function generateSweepCase(seed: number, index: number, fields: { route: RouteSpec; slot: number }[], fx: Fixtures): FuzzCase {
  const k = index - SWEEP_BASE;
  const { route, slot } = fields[Math.floor(k / SWEEP_VALUES.length)];
  const [label, value] = SWEEP_VALUES[k % SWEEP_VALUES.length];
  const rng = new FullRng(0);
  const path = route.path(rng, fx);
  const template = tree(route.body!(rng, fx, `${seed.toString(36)}-sw${k}`));
  const place = slotsOf(template)[slot];
  place.set(value);
  const field = place.path;
  return {
    index,
    seed,
    route,
    method: route.method,
    path,
    headers: { 'x-gateway-api-key': 'gk-test-admin-key-0123456789', ...(route.headers?.(rng, fx) ?? {}), 'content-type': 'application/json' },
    body: Buffer.from(serialize(template)),
    chunked: false,
    notes: [`sweep: ${field.replace(/^\$\./, '')} := ${label}`],
    shape: shapeOf(path),
    upstream: route.upstream,
  };
}

function generateCase(seed: number, index: number, rotation: RouteSpec[], fx: Fixtures): FuzzCase {
  const seedOfCase = caseSeed(seed, index);
  const rng = new Rng(seedOfCase);
  const route = rotation[index % rotation.length];
  const notes: string[] = [];
  let method = route.method;
  if (route.name.startsWith('GET|DELETE') && rng.chance(0.3)) method = 'DELETE';
  if (route.name.startsWith('other methods')) method = rng.pick(['PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'POST', 'GET']);
  const path = route.path(rng, fx);
  // Never delete the fixtures the other cases use (hostile ids only).
  if (method === 'DELETE' && /fuzz-|fz-|version/.test(path)) method = 'GET';
  const apiKey = rng.chance(0.1) ? fx.userKey : 'gk-test-admin-key-0123456789';
  if (apiKey !== 'gk-test-admin-key-0123456789') notes.push('user-role API key');
  const headers: Record<string, string | string[]> = { 'x-gateway-api-key': apiKey, ...(route.headers?.(rng, fx) ?? {}) };
  let body: Buffer | null = null;

  const tag = `${seed.toString(36)}-${index}`;
  if (route.form) {
    const form = hostileMultipart(rng, route.form(rng, path));
    body = form.body;
    headers['content-type'] = form.contentType;
    notes.push(...form.notes);
  } else if (route.body) {
    let template: J = tree(route.body(rng, fx, tag));
    // Model routing through the @slug/model prefix when no routing header was chosen.
    if (
      route.upstream &&
      !headers['x-gateway-virtual-key'] &&
      !headers['x-gateway-provider'] &&
      template instanceof Obj &&
      route.name !== 'POST /v1/prompts/{id}/completions'
    ) {
      const model = template.entries.find(([k]) => k === 'model');
      if (model && typeof model[1] === 'string' && !model[1].startsWith('@')) model[1] = `@${route.shape === 'anthropic' ? VK_ANTHROPIC : VK}/${model[1]}`;
    }
    const huge = index % 331 === 17;
    const variant = huge
      ? 'huge'
      : rng.weighted<string>([
          [8, 'valid'],
          [25, 'edge'],
          [32, 'mutated'],
          [12, 'raw'],
          [8, 'pollution'],
          [6, 'deep'],
          [4, 'unicode'],
        ]);
    let contentType: string | null = 'application/json';
    switch (variant) {
      case 'valid':
        notes.push('valid body');
        break;
      case 'edge': {
        const result = edgeMutation(rng, template);
        template = result.root;
        notes.push(...result.notes);
        break;
      }
      case 'mutated': {
        const result = mutate(rng, template, rng.pick([1, 1, 2, 3]));
        template = result.root;
        notes.push(...result.notes);
        break;
      }
      case 'pollution':
        template = pollutionEverywhere(rng, template);
        notes.push('__proto__ / constructor / prototype keys at every level');
        break;
      case 'deep': {
        const deep = deepNesting(rng);
        if (template instanceof Obj && rng.chance(0.7)) {
          const entries = template.entries;
          const key = entries.length && rng.chance(0.4) ? rng.pick(entries)[0] : rng.pick(['nested', 'metadata', 'extra']);
          const existing = entries.find(([k]) => k === key);
          if (existing) existing[1] = deep;
          else entries.splice(rng.int(entries.length + 1), 0, [key, deep]);
          notes.push(`deep nesting in field ${key}: ${preview(deep.text, 40)}`);
        } else {
          template = deep;
          notes.push(`deep nesting as the whole body: ${preview(deep.text, 40)}`);
        }
        break;
      }
      case 'unicode':
        template = unicodeEverywhere(rng, template);
        notes.push('unicode edge cases in every string');
        break;
      case 'huge': {
        const big = enormousString(rng);
        if (template instanceof Obj) {
          // Not the model or slug (refused by length before anything else reads the body).
          const strings = template.entries.filter(([k, v]) => typeof v === 'string' && k !== 'model' && k !== 'slug');
          const entry =
            strings.length && rng.chance(0.7) ? rng.pick(strings) : (template.entries.push(['padding', '']), template.entries[template.entries.length - 1]);
          entry[1] = big;
          notes.push(`enormous string (${big.length} UTF-16 units of ${JSON.stringify(String.fromCodePoint(big.codePointAt(0)!))}) in ${entry[0]}`);
        }
        break;
      }
    }
    const text = serialize(template);
    body = Buffer.from(text, 'utf8');
    if (variant === 'raw') {
      const raw = rawBody(rng, text);
      notes.push(raw.note);
      body = raw.body;
      if (raw.contentType !== undefined) contentType = raw.contentType;
      Object.assign(headers, raw.headers);
    }
    if (contentType !== null) headers['content-type'] = contentType;
  } else if (method !== 'HEAD' && rng.chance(0.05)) {
    body = Buffer.from(serialize(rng.chance(0.5) ? pollutionEverywhere(rng, new Obj([['a', new Obj([['b', 1]])]])) : deepNesting(rng)));
    headers['content-type'] = 'application/json';
    notes.push(`a body on ${method}`);
  }

  if (rng.chance(route.upstream ? 0.3 : 0.2)) {
    const fuzz = hostileHeaders(rng, {
      virtualKey: route.shape === 'anthropic' ? VK_ANTHROPIC : VK,
      mockUrl: fx.mockUrl,
      anthropic: route.shape === 'anthropic',
    });
    for (const name of fuzz.remove) delete headers[name];
    Object.assign(headers, fuzz.headers);
    notes.push(...fuzz.notes);
  }
  // The in-process mock builds an embedding of `dimensions` floats: billions of them would stall the
  // whole test process (the mock's limit, not the gateway's). Such a body still goes through the
  // gateway, to a provider address that refuses the connection (a legitimate 502).
  if (route.name === 'POST /v1/embeddings' && body !== null && mockWouldStall(body)) {
    for (const name of ['x-gateway-config', 'x-gateway-virtual-key']) delete headers[name];
    Object.assign(headers, { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-fuzz', 'x-gateway-custom-host': 'http://127.0.0.1:9/v1' });
    notes.push('(routed to a refused port: the mock cannot build that many dimensions)');
  }
  const chunked = body !== null && body.length > 0 && rng.chance(0.05);
  if (chunked) notes.push('chunked transfer encoding');
  return {
    index,
    seed: seedOfCase,
    route,
    method,
    path,
    headers,
    body,
    chunked,
    notes,
    shape: shapeOf(path),
    upstream: route.upstream,
  };
}

/** An embeddings body whose `dimensions` the mock upstream would try to allocate. */
function mockWouldStall(body: Buffer): boolean {
  try {
    const dimensions = JSON.parse(body.toString('utf8'))?.dimensions;
    return Number.isInteger(dimensions) && dimensions > 65_536;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Sending and checking

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  ms: number;
  /** Set when there was no HTTP answer at all. */
  failure?: string;
}

function send(base: URL, c: Pick<FuzzCase, 'method' | 'path' | 'headers' | 'body' | 'chunked'>, agent: Agent): Promise<Answer> {
  const started = Date.now();
  return new Promise((resolve) => {
    const headers = { ...c.headers };
    if (c.body !== null && !c.chunked) headers['content-length'] = String(c.body.length);
    // Node frames a GET/DELETE body only when asked to (else the bytes would look like a next request).
    if (c.chunked) headers['transfer-encoding'] = 'chunked';
    let settled = false;
    const done = (answer: Omit<Answer, 'ms'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...answer, ms: Date.now() - started });
    };
    // Node refuses to send a path with spaces, control characters or non-latin1 characters: those are percent-encoded.
    const path = c.path.replace(/[^\u0021-\u00ff]/gu, (ch) => {
      try {
        return encodeURIComponent(ch);
      } catch {
        return '%ED%A0%80'; // a lone surrogate: its CESU-8 bytes
      }
    });
    let req: ReturnType<typeof httpRequest>;
    try {
      req = httpRequest({ host: base.hostname, port: base.port, method: c.method, path, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', (error) =>
          done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), failure: `response cut: ${error.message}` }),
        );
      });
    } catch (error) {
      // The test's own mistake (a header or path Node will not send): reported as a failure of the case.
      resolve({ status: 0, headers: {}, body: Buffer.alloc(0), ms: 0, failure: `could not send: ${(error as Error).message}` });
      return;
    }
    const timer = setTimeout(() => {
      done({ status: 0, headers: {}, body: Buffer.alloc(0), failure: `no complete answer within ${REQUEST_TIMEOUT_MS} ms` });
      req.destroy();
    }, REQUEST_TIMEOUT_MS);
    req.on('error', (error) => done({ status: 0, headers: {}, body: Buffer.alloc(0), failure: `request failed: ${error.message}` }));
    if (c.body === null) req.end();
    else if (c.chunked) {
      const half = Math.floor(c.body.length / 2);
      req.write(c.body.subarray(0, half));
      setTimeout(() => req.end(c.body!.subarray(half)), 2);
    } else req.end(c.body);
  });
}

/** Stack frames, source paths or dependency folders: never in a body. */
const STACK_TRACE = [/\n\s+at \S+/, /\bat \S+ \(?(\/|node:|file:)[^)\s]*:\d+:\d+/, /node_modules/, /\/work\/main\//, /\b(src|dist)\/[\w/.-]+\.(ts|js):\d+/];

function shapeProblem(shape: Shape, body: any): string | null {
  const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(body)) return 'error body is not a JSON object';
  if (shape === 'google') {
    const e = body.error;
    if (Object.keys(body).length !== 1 || !isObject(e)) return 'not the Google error shape {error:{code, message, status}}';
    if (typeof e.code !== 'number' || typeof e.message !== 'string' || typeof e.status !== 'string')
      return 'Google error without numeric code, string message and status';
    return null;
  }
  if (shape === 'anthropic') {
    if (body.type !== 'error' || !isObject(body.error)) return 'not the Anthropic error shape {type:"error", error:{type, message}}';
    if (typeof body.error.type !== 'string' || typeof body.error.message !== 'string') return 'Anthropic error without string type/message';
    return null;
  }
  const keys = Object.keys(body);
  if (keys.length !== 1 || keys[0] !== 'error' || !isObject(body.error)) return `not the OpenAI error shape {error:{…}} (top-level keys: ${keys.join(', ')})`;
  const e = body.error;
  for (const field of ['message', 'type', 'param', 'code']) if (!(field in e)) return `error.${field} missing`;
  if (typeof e.message !== 'string' || typeof e.type !== 'string') return 'error.message / error.type not strings';
  if (e.param !== null && typeof e.param !== 'string') return 'error.param neither string nor null';
  if (e.code !== null && typeof e.code !== 'string') return 'error.code neither string nor null';
  return null;
}

/** Everything wrong with one answer (empty: fine). */
function problemsOf(c: FuzzCase, answer: Answer): string[] {
  if (answer.failure) return [answer.failure];
  const problems: string[] = [];
  const { status } = answer;
  const text = answer.body.toString('utf8');
  const type = String(answer.headers['content-type'] ?? '');
  if (status === 500) problems.push('500');
  else if (status > 500 && !(c.upstream && [502, 503, 504].includes(status))) problems.push(`${status} (no provider involved)`);
  else if (status < 200 || (status >= 300 && status < 400)) problems.push(`unexpected status ${status}`);
  for (const pattern of STACK_TRACE) if (pattern.test(text)) problems.push(`stack trace or source path in the body (${pattern})`);
  if (c.method === 'HEAD') return problems;
  if (status >= 400) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      problems.push(`error body is not JSON (content-type ${type || 'none'})`);
      return problems;
    }
    const shape = shapeProblem(c.shape, parsed);
    if (shape) problems.push(shape);
    if (!/^application\/json/i.test(type)) problems.push(`error content-type ${type || 'none'}`);
  } else if (status >= 200 && status < 300 && status !== 204 && c.method !== 'OPTIONS') {
    if (/text\/event-stream/i.test(type)) return problems;
    // A transcript asked for as text, SRT or VTT comes back as text.
    if (c.path.startsWith('/v1/audio/') && /^text\//i.test(type)) return problems;
    try {
      JSON.parse(text);
      if (!/json/i.test(type)) problems.push(`${status} JSON with content-type ${type || 'none'}`);
    } catch {
      problems.push(`${status} body is not JSON (content-type ${type || 'none'})`);
    }
  }
  return problems;
}

/** A short signature grouping failures of one cause. */
function signature(c: FuzzCase, answer: Answer, problems: string[]): string {
  let code = '';
  try {
    const parsed = JSON.parse(answer.body.toString('utf8'));
    code = parsed?.error?.code ?? parsed?.error?.type ?? '';
  } catch {
    /* not JSON */
  }
  // For a 5xx, the field the input changed tells causes apart (`name := null` vs `budget_limit_usd := 1e-7`).
  const field = answer.status >= 500 ? /(?:sweep: |edge |replace |type-swap |remove |unicode )([^\s]+)/.exec(c.notes.join(' | '))?.[1] : undefined;
  const route = c.method === c.route.method || c.route.name.startsWith(c.method) ? c.route.name : `${c.route.name} (as ${c.method})`;
  return `${route} -> ${answer.status || 'no answer'} ${code}${field ? ` (input changed: ${field.replace(/^\$\./, '')})` : ''} | ${problems.join('; ')}`;
}

function describeCase(c: FuzzCase, answer: Answer, problems: string[]): string {
  const headers = Object.fromEntries(Object.entries(c.headers).filter(([k]) => k !== 'x-gateway-api-key' || c.headers[k] !== 'gk-test-admin-key-0123456789'));
  return [
    `  case #${c.index} (FUZZ_SEED=${SEED} FUZZ_ONLY=${c.index}; case seed ${c.seed}) ${c.method} ${preview(c.path, 200)}`,
    `    problems: ${problems.join('; ')}`,
    `    input:    ${c.notes.join(' | ') || '-'}`,
    `    headers:  ${preview(JSON.stringify(headers), 300)}`,
    `    body:     ${c.body === null ? '(none)' : `${c.body.length} bytes: ${preview(c.body.toString('latin1'), 300)}`}`,
    `    answer:   ${answer.status} ${preview(answer.body.toString('utf8'), 300)}`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Process-level watchers: uncaught exceptions and prototype pollution

/** The real `process` (jest hands tests a copy whose listeners the runtime never calls). */
const realProcess = vm.runInThisContext('process') as NodeJS.Process;
/** Object.prototype of the Node realm outside jest's sandbox (node:querystring, node:http live there). */
const outerObjectPrototype = vm.runInThisContext('Object.prototype') as object;

const PROTOTYPES: [string, object][] = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
  ['String.prototype', String.prototype],
  ['outer-realm Object.prototype', outerObjectPrototype],
];
const snapshotPrototypes = () => PROTOTYPES.map(([name, proto]) => [name, Reflect.ownKeys(proto).map(String).sort()] as const);

interface Uncaught {
  kind: string;
  error: string;
  recentCases: number[];
}

// ---------------------------------------------------------------------------------------------

describe('hostile input: thousands of generated requests to every operation and the admin API', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;
  let fx: Fixtures;
  const prototypesBefore = snapshotPrototypes();
  const failures = new Map<string, { count: number; examples: string[] }>();
  const uncaught: Uncaught[] = [];
  const recent: number[] = [];
  const statusCounts = new Map<number, number>();
  let sent = 0;
  let elapsedMs = 0;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway({
      LOG_LEVEL: process.env.FUZZ_LOG_LEVEL ?? 'fatal',
      UPSTREAM_TIMEOUT_MS: '5000',
      RETRY_BASE_DELAY_MS: '1',
      RETRY_MAX_DELAY_MS: '20',
    });
    await createVirtualKey(gateway, { slug: VK, key: 'sk-fuzz-openai-0000', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: VK_ANTHROPIC, provider: 'anthropic', key: 'sk-ant-fuzz-0000', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: VK_COHERE, provider: 'cohere', key: 'fuzz-cohere-0000', custom_host: `${mock.url}/v2` });
    await createVirtualKey(gateway, { slug: VK_GEMINI, provider: 'google', key: 'fuzz-gemini-0000', custom_host: `${mock.url}/v1beta` });
    await createVirtualKey(gateway, { slug: 'fuzz-patch-vk', key: 'sk-fuzz-patch-0000', custom_host: 'http://127.0.0.1:9/v1' });
    await createVirtualKey(gateway, { slug: 'fuzz-disabled', key: 'sk-fuzz-disabled-0000', custom_host: `${mock.url}/v1` });
    expect((await admin(gateway, 'PATCH', '/v1/virtual-keys/fuzz-disabled', { disabled: true })).status).toBe(200);
    await admin(gateway, 'POST', '/v1/virtual-keys', {
      name: 'expired',
      slug: 'fuzz-expired',
      provider: 'openai',
      key: 'sk-x',
      custom_host: `${mock.url}/v1`,
      expires_at: '2001-01-01T00:00:00Z',
    });
    const prompt = await admin(gateway, 'POST', '/v1/prompts', {
      name: 'Fuzz run',
      slug: 'fuzz-run-prompt',
      model: 'gpt-4o-mini',
      virtual_key: VK,
      messages: [
        { role: 'system', content: 'You help {{customer}}.' },
        { role: 'user', content: '{{question}}' },
      ],
      variables: { customer: 'Ada' },
      hyperparameters: { max_tokens: 16 },
    });
    expect(prompt.status).toBe(201);
    expect(
      (
        await admin(gateway, 'POST', '/v1/prompts', {
          name: 'Fuzz patch',
          slug: 'fuzz-patch-prompt',
          model: 'gpt-4o-mini',
          virtual_key: VK,
          messages: [{ role: 'user', content: 'Hi' }],
        })
      ).status,
    ).toBe(201);
    expect((await admin(gateway, 'POST', '/v1/configs', { name: 'Fuzz', slug: 'fuzz-config', config: { virtual_key: VK } })).status).toBe(201);
    expect((await admin(gateway, 'POST', '/v1/configs', { name: 'Fuzz patch', slug: 'fuzz-patch-config', config: { virtual_key: VK } })).status).toBe(201);
    expect((await admin(gateway, 'POST', '/v1/end-users', { user: 'fuzz-patch-user', budget_limit_usd: 100 })).status).toBe(201);
    const apiKey = await admin(gateway, 'POST', '/v1/api-keys', { name: 'fuzz patch', role: 'user' });
    expect(apiKey.status).toBe(201);
    const userKey = await admin(gateway, 'POST', '/v1/api-keys', { name: 'fuzz user', role: 'user', metadata: { team: 'fuzz' } });
    expect(userKey.status).toBe(201);
    const stored = await call(gateway, '/v1/responses', {
      headers: { 'x-gateway-virtual-key': VK },
      body: { model: 'gpt-4.1-mini', input: 'Remember me', store: true },
    });
    expect(stored.status).toBe(200);
    fx = { mockUrl: mock.url, promptId: prompt.body.id, storedResponseId: stored.body.id, patchApiKeyId: apiKey.body.id, userKey: userKey.body.key };
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it(`sends the generated requests (seed ${SEED})`, async () => {
    const rotation = schedule(SEED);
    const fields = sweepFields(fx);
    const indices = ONLY ?? [
      ...Array.from({ length: CASES }, (_, i) => i),
      ...Array.from({ length: fields.length * SWEEP_VALUES.length }, (_, k) => SWEEP_BASE + k),
    ];
    const base = new URL(gateway.url);
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

    // Uncaught exceptions of the in-process gateway are recorded (with the cases around them)
    // rather than left to jest, so the run finishes and the report names what caused them.
    const saved = { uncaughtException: realProcess.listeners('uncaughtException'), unhandledRejection: realProcess.listeners('unhandledRejection') };
    const onUncaught = (kind: string) => (error: unknown) =>
      uncaught.push({
        kind,
        error: error instanceof Error ? `${error.name}: ${error.message} ${error.stack?.split('\n').slice(1, 4).join(' / ')}` : String(error),
        recentCases: [...recent],
      });
    const listeners = { uncaughtException: onUncaught('uncaughtException'), unhandledRejection: onUncaught('unhandledRejection') };
    for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
      realProcess.removeAllListeners(event);
      realProcess.on(event, listeners[event] as (...args: any[]) => void);
    }

    const started = Date.now();
    try {
      let next = 0;
      const worker = async () => {
        while (next < indices.length) {
          const index = indices[next++];
          const c = index >= SWEEP_BASE ? generateSweepCase(SEED, index, fields, fx) : generateCase(SEED, index, rotation, fx);
          // Written before sending too, so that a case that hangs the process is named in the trace.
          if (TRACE_FILE)
            appendFileSync(
              TRACE_FILE,
              `>> #${index} ${c.method} ${preview(c.path, 120)} | ${c.notes.join(' | ')} | headers ${preview(JSON.stringify(c.headers), 400)} | body ${c.body ? preview(c.body.toString('latin1'), 400) : '-'}\n`,
            );
          const answer = await send(base, c, agent);
          sent++;
          recent.push(index);
          if (recent.length > 2 * CONCURRENCY) recent.shift();
          statusCounts.set(answer.status, (statusCounts.get(answer.status) ?? 0) + 1);
          const problems = problemsOf(c, answer);
          if (TRACE_FILE) {
            appendFileSync(
              TRACE_FILE,
              `#${index} ${c.method} ${preview(c.path, 120)} -> ${answer.status} ${answer.ms}ms ${problems.length ? 'FAIL ' + problems.join('; ') : ''} | ${c.notes.join(' | ')} | ${preview(answer.body.toString('utf8'), 160)}\n`,
            );
          }
          if (problems.length) {
            const key = signature(c, answer, problems);
            const entry = failures.get(key) ?? { count: 0, examples: [] };
            entry.count++;
            if (entry.examples.length < 2) entry.examples.push(describeCase(c, answer, problems));
            failures.set(key, entry);
          }
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      // Log rows are written after the answers: give their redaction and INSERTs a moment inside the watch.
      await new Promise((r) => setTimeout(r, 500));
      await gateway.flushLogs().catch(() => undefined);
    } finally {
      elapsedMs = Date.now() - started;
      agent.destroy();
      for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
        realProcess.removeListener(event, listeners[event] as (...args: any[]) => void);
        for (const listener of saved[event]) realProcess.on(event, listener as (...args: any[]) => void);
      }
    }
    const sweepCount = indices.filter((i) => i >= SWEEP_BASE).length;
    const statuses = [...statusCounts.entries()]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}:${n}`)
      .join(' ');
    console.log(`fuzz: ${sent} requests (${sent - sweepCount} random, ${sweepCount} field sweep) in ${elapsedMs} ms (seed ${SEED}); statuses ${statuses}`);
    expect(sent).toBe(indices.length);
  }, 240_000);

  it('never answers 500 (nor another 5xx without a provider), always in the documented error shape, never with a stack trace', () => {
    if (failures.size === 0) return;
    const total = [...failures.values()].reduce((sum, f) => sum + f.count, 0);
    const report = [...failures.entries()]
      .sort(([, a], [, b]) => b.count - a.count)
      .map(([key, { count, examples }]) => `\n[${count}x] ${key}\n${examples.join('\n')}`)
      .join('\n');
    throw new Error(`${total} of ${sent} hostile requests were answered wrongly (seed ${SEED}), ${failures.size} distinct kinds:\n${report}`);
  });

  it('does not crash: no uncaught exception or unhandled rejection while the requests ran', () => {
    if (uncaught.length === 0) return;
    const distinct = new Map<string, Uncaught & { count: number }>();
    for (const u of uncaught) {
      const key = `${u.kind} ${u.error.slice(0, 160)}`;
      const entry = distinct.get(key) ?? { ...u, count: 0 };
      entry.count++;
      distinct.set(key, entry);
    }
    throw new Error(
      `${uncaught.length} uncaught errors in the gateway process (a production process would exit on the first one), seed ${SEED}:\n` +
        [...distinct.values()]
          .map((u) => `[${u.count}x] ${u.kind}: ${preview(u.error, 600)}\n    while these cases had just been answered: ${u.recentCases.join(', ')}`)
          .join('\n'),
    );
  });

  it('leaves every prototype as it was (no pollution through __proto__ / constructor / prototype keys)', () => {
    expect(({} as any).polluted).toBeUndefined();
    expect(({} as any).x).toBeUndefined();
    expect(vm.runInThisContext('({})').polluted).toBeUndefined();
    expect(snapshotPrototypes()).toEqual(prototypesBefore);
  });

  it('is still healthy afterwards: /health, a normal request, and its log row', async () => {
    const health = await call(gateway, '/health');
    expect(health.status).toBe(200);
    const chat = await call(gateway, '/v1/chat/completions', {
      headers: { 'x-gateway-virtual-key': VK },
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] },
    });
    expect(chat.status).toBe(200);
    expect(chat.body.choices[0].message.content).toBe('Hello from mock');
    const prototypeBody = await call(gateway, '/v1/chat/completions', {
      headers: { 'x-gateway-virtual-key': VK },
      body: '{"__proto__":{"polluted":1},"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi","__proto__":{"polluted":1}}],"constructor":{"prototype":{"polluted":1}}}',
    });
    expect(prototypeBody.status).toBe(200);
    expect(({} as any).polluted).toBeUndefined();

    // The log writer still stores rows (a row it cannot store must not block the ones after it).
    const requestId = chat.headers.get('x-gateway-request-id');
    const deadline = Date.now() + 5_000;
    let status = 0;
    while (Date.now() < deadline) {
      await gateway.flushLogs().catch(() => undefined);
      status = (await admin(gateway, 'GET', `/v1/logs/${requestId}`)).status;
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    if (status !== 200) {
      throw new Error(
        `The log row of a normal request made after the fuzz was not stored within 5 s (GET /v1/logs/${requestId} -> ${status}): ` +
          'the log writer is stuck on a record it cannot store (rerun with FUZZ_LOG_LEVEL=warn to see the LogWriter warnings).',
      );
    }
  }, 30_000);

  it('answers requests the HTTP parser refuses (control characters in a header, headers over 16 KiB) with a 4xx in the error shape', async () => {
    const base = new URL(gateway.url);
    const raw = (head: string): Promise<{ status: number; headers: string; body: string }> =>
      new Promise((resolve, reject) => {
        const socket = connect(Number(base.port), base.hostname, () => socket.end(Buffer.from(head, 'latin1')));
        const chunks: Buffer[] = [];
        socket.on('data', (d) => chunks.push(d));
        socket.on('error', reject);
        socket.setTimeout(5000, () => socket.destroy(new Error('no answer')));
        socket.on('close', () => {
          const text = Buffer.concat(chunks).toString('latin1');
          const [head_, ...rest] = text.split('\r\n\r\n');
          resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), headers: head_, body: rest.join('\r\n\r\n') });
        });
      });
    const request = (extra: string) =>
      `POST /v1/chat/completions HTTP/1.1\r\nHost: ${base.host}\r\nx-gateway-api-key: gk-test-admin-key-0123456789\r\nx-gateway-virtual-key: ${VK}\r\ncontent-type: application/json\r\ncontent-length: 2\r\n${extra}\r\n\r\n{}`;
    const cases: [string, string][] = [
      ['NUL in x-gateway-trace-id', 'x-gateway-trace-id: a\u0000b'],
      ['escape character in x-gateway-trace-id', 'x-gateway-trace-id: a\u001b[31mred'],
      ['DEL in x-gateway-metadata', 'x-gateway-metadata: {"a":"\u007f"}'],
      ['bare CR in x-gateway-config', 'x-gateway-config: {"a":1}\rx'],
      ['x-gateway-trace-id of 20 KB', `x-gateway-trace-id: ${'t'.repeat(20_000)}`],
    ];
    const wrong: string[] = [];
    for (const [name, header] of cases) {
      const answer = await raw(request(header));
      let problem: string | null = answer.status >= 400 && answer.status < 500 ? null : `status ${answer.status}`;
      if (!problem) {
        try {
          problem = shapeProblem('openai', JSON.parse(answer.body));
        } catch {
          problem = `body is not JSON: ${JSON.stringify(answer.body.slice(0, 100))}`;
        }
      }
      if (STACK_TRACE.some((p) => p.test(answer.body))) problem = `stack trace in the body`;
      if (problem) wrong.push(`${name}: ${answer.status} ${problem} (head: ${JSON.stringify(answer.headers.slice(0, 120))})`);
    }
    // Whatever the answer, the gateway serves the next request.
    expect((await call(gateway, '/health')).status).toBe(200);
    expect(wrong).toEqual([]);
  });
});

describe('every request is logged, whatever its values (CONTRACT section 6)', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway({ LOG_LEVEL: process.env.FUZZ_LOG_LEVEL ?? 'fatal' });
    await createVirtualKey(gateway, { slug: VK, key: 'sk-fuzz-openai-0000', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: VK_ANTHROPIC, provider: 'anthropic', key: 'sk-ant-fuzz-0000', custom_host: `${mock.url}/v1` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  /** Whether the log row of a request id is stored within `ms`. */
  async function stored(requestId: string | null, ms = 2000): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      await gateway.flushLogs().catch(() => undefined);
      if ((await admin(gateway, 'GET', `/v1/logs/${requestId}`)).status === 200) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  }

  const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] };
  const SOMETHING_PG_CANNOT_STORE: [string, string, Record<string, string>, string][] = [
    ['a NUL in the body user', '/v1/chat/completions', { 'x-gateway-virtual-key': VK }, JSON.stringify({ ...CHAT, user: 'fuzz\u0000user' })],
    [
      'a NUL in x-gateway-metadata',
      '/v1/chat/completions',
      { 'x-gateway-virtual-key': VK, 'x-gateway-metadata': '{"team":"a\\u0000b"}' },
      JSON.stringify(CHAT),
    ],
    [
      'a lone surrogate in x-gateway-metadata',
      '/v1/chat/completions',
      { 'x-gateway-virtual-key': VK, 'x-gateway-metadata': '{"team":"\\ud800"}' },
      JSON.stringify(CHAT),
    ],
    [
      'a NUL in the model of an unknown @slug/model (echoed by the error)',
      '/v1/chat/completions',
      {},
      JSON.stringify({ ...CHAT, model: '@no\u0000such/gpt-4o-mini' }),
    ],
    [
      'a NUL in the Messages metadata.user_id',
      '/v1/messages',
      { 'x-gateway-virtual-key': VK_ANTHROPIC },
      JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }], metadata: { user_id: 'a\u0000b' } }),
    ],
  ];

  it.each(SOMETHING_PG_CANNOT_STORE)('%s: answered, and its log row stored', async (_, path, headers, body) => {
    const answer = await call(gateway, path, { headers, body });
    expect(answer.status).not.toBe(500);
    expect({ answered: answer.status, logRowStored: await stored(answer.headers.get('x-gateway-request-id')) }).toEqual({
      answered: answer.status,
      logRowStored: true,
    });
  });

  // Last: when it fails, the log writer stays stuck for every later request.
  it.each([
    [
      'a 3,000-character Messages metadata.user_id (the end_user column is indexed)',
      '/v1/messages',
      { 'x-gateway-virtual-key': VK_ANTHROPIC },
      { model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }], metadata: { user_id: incompressible(new Rng(1), 3000) } },
    ],
    [
      'an inline config override_params.model of 3,000 characters (the model column is indexed)',
      '/v1/chat/completions',
      { 'x-gateway-config': JSON.stringify({ virtual_key: VK, override_params: { model: incompressible(new Rng(2), 3000) } }) },
      CHAT,
    ],
  ] as [string, string, Record<string, string>, unknown][])('%s does not stop the log writer', async (_, path, headers, body) => {
    const answer = await call(gateway, path, { headers, body });
    expect(answer.status).not.toBe(500);
    const after = await call(gateway, '/v1/chat/completions', { headers: { 'x-gateway-virtual-key': VK }, body: CHAT });
    expect(after.status).toBe(200);
    expect({ laterRequestLogged: await stored(after.headers.get('x-gateway-request-id')) }).toEqual({ laterRequestLogged: true });
  });
});

describe('bodies over the limit: 413 before they are read whole', () => {
  const LIMIT = 65_536;
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ BODY_LIMIT_BYTES: String(LIMIT), LOG_LEVEL: 'fatal' });
  });

  afterAll(() => gateway?.close());

  interface Streamed {
    status: number;
    body: any;
    /** Body bytes written when the response began. */
    writtenAtResponse: number;
    /** The client was still sending (had not ended its request) when the answer came. */
    stillSending: boolean;
    closedByServer: boolean;
  }

  /**
   * Streams a body slowly (`chunk` bytes every `intervalMs`, up to `total`), announcing
   * `contentLength` or sending it chunked, and stops writing as soon as the answer begins.
   */
  function stream(path: string, options: { contentLength?: number; total: number; chunk: number; intervalMs: number; stopAfter?: number }): Promise<Streamed> {
    const url = new URL(`${gateway.url}${path}`);
    return new Promise((resolve, reject) => {
      let written = 0;
      let ended = false;
      let writtenAtResponse = -1;
      let stillSending = false;
      let closedByServer = false;
      let timer: NodeJS.Timeout | undefined;
      const headers: Record<string, string> = { 'x-gateway-api-key': gateway.adminKey, 'x-gateway-virtual-key': 'nowhere', 'content-type': 'application/json' };
      if (options.contentLength !== undefined) headers['content-length'] = String(options.contentLength);
      else headers['transfer-encoding'] = 'chunked';
      const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers, agent: false }, (res) => {
        writtenAtResponse = written;
        stillSending = !ended;
        clearTimeout(timer);
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => {
          req.socket?.once('close', () => (closedByServer = true));
          setTimeout(() => {
            let body: unknown;
            try {
              body = JSON.parse(text);
            } catch {
              body = text;
            }
            resolve({ status: res.statusCode ?? 0, body, writtenAtResponse, stillSending, closedByServer: closedByServer || req.socket?.destroyed === true });
          }, 100);
        });
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        // After the answer began, writing into the connection the server closed is expected.
        if (writtenAtResponse >= 0) return;
        // Before it: the client never saw an answer (e.g. the connection was reset under it).
        clearTimeout(timer);
        resolve({ status: 0, body: `no answer: ${error.code ?? error.message}`, writtenAtResponse: written, stillSending: !ended, closedByServer: true });
      });
      const pad = Buffer.alloc(options.chunk, 0x61);
      req.write('{"model":"x","pad":"');
      written += 20;
      const pump = () => {
        if (writtenAtResponse >= 0 || req.destroyed) return;
        if (written >= options.total || (options.stopAfter !== undefined && written >= options.stopAfter)) {
          if (options.stopAfter === undefined) {
            ended = true;
            req.end('"}');
          }
          return; // with stopAfter: keep the request open, the body unfinished
        }
        req.write(pad);
        written += pad.length;
        timer = setTimeout(pump, options.intervalMs);
      };
      pump();
      const deadline = setTimeout(() => {
        if (writtenAtResponse < 0) {
          req.destroy();
          reject(new Error(`no answer within 15 s (${written} bytes written)`));
        }
      }, 15_000);
      req.once('close', () => clearTimeout(deadline));
    });
  }

  it.each([
    ['/v1/chat/completions', 'openai'],
    ['/v1/messages', 'anthropic'],
    ['/v1/configs', 'openai'],
  ] as const)('%s: Content-Length of 100 MB, 1 KB sent, body unfinished: 413 at once', async (path, shape) => {
    const answer = await stream(path, { contentLength: 100 * 1024 * 1024, total: 100 * 1024 * 1024, chunk: 1024, intervalMs: 10, stopAfter: 1024 });
    expect({ status: answer.status, shape: shapeProblem(shape, answer.body) }).toEqual({ status: 413, shape: null });
    if (shape === 'openai') expect(answer.body.error.code).toBe('payload_too_large');
    else expect(answer.body.error.type).toBe('request_too_large'); // as Anthropic names it
    expect(answer.stillSending).toBe(true);
    expect(answer.writtenAtResponse).toBeLessThanOrEqual(1024 + 20);
  });

  it.each(['/v1/chat/completions', '/v1/messages', '/v1/embeddings'])(
    '%s: chunked, 8 KB every 5 ms up to 8 MB: 413 after about the limit, connection closed',
    async (path) => {
      const answer = await stream(path, { total: 8 * 1024 * 1024, chunk: 8192, intervalMs: 5 });
      expect(answer.status).toBe(413);
      expect(shapeProblem(path === '/v1/messages' ? 'anthropic' : 'openai', answer.body)).toBeNull();
      expect(answer.stillSending).toBe(true);
      // The limit plus what was in flight (socket buffers), far from the 8 MB the client meant to send.
      expect(answer.writtenAtResponse).toBeLessThan(16 * LIMIT);
      expect(answer.closedByServer).toBe(true);
    },
  );

  it('Content-Length one byte over the limit: 413 from the header alone; exactly the limit: read and parsed', async () => {
    // Only the start of the body is sent (a client writing on after the 413: see the full-speed test below).
    const over = await stream('/v1/chat/completions', { contentLength: LIMIT + 1, total: LIMIT + 1, chunk: 1024, intervalMs: 10, stopAfter: 20 });
    expect({ status: over.status, body: over.status === 413 ? 'answered' : over.body }).toEqual({ status: 413, body: 'answered' });
    const body = Buffer.from(JSON.stringify({ model: 'x', pad: 'a'.repeat(LIMIT - 22) }));
    expect(body.length).toBe(LIMIT);
    const atLimit = await call(gateway, '/v1/chat/completions', { body: body.toString() });
    expect(atLimit.status).toBe(400); // read and parsed: routing (which reads the body's model) finds no provider, not a 413
    expect(atLimit.body.error.code).not.toBe('payload_too_large');
  });

  it('a client sending an oversized body at full speed receives the 413 (the connection is not reset under it)', async () => {
    const url = new URL(`${gateway.url}/v1/chat/completions`);
    const once = (size: number): Promise<string> =>
      new Promise((resolve) => {
        const body = Buffer.concat([Buffer.from('{"model":"x","pad":"'), Buffer.alloc(size - 22, 0x61), Buffer.from('"}')]);
        const req = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            agent: false,
            headers: { 'x-gateway-api-key': gateway.adminKey, 'content-type': 'application/json', 'content-length': String(body.length) },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8').on('data', (d: string) => (text += d));
            res.on('end', () => resolve(`${res.statusCode} ${shapeProblem('openai', JSON.parse(text || 'null')) ?? 'error shape'}`));
            res.on('error', (error: NodeJS.ErrnoException) => resolve(`answer cut: ${error.code ?? error.message}`));
          },
        );
        req.on('error', (error: NodeJS.ErrnoException) => resolve(`no answer: ${error.code ?? error.message}`));
        // The headers and the start of the body first (the gateway answers from Content-Length), the rest right after.
        req.write(body.subarray(0, 20));
        setTimeout(() => req.end(body.subarray(20)), 1);
      });
    const outcomes: Record<string, Record<string, number>> = {};
    const expected: Record<string, Record<string, number>> = {};
    for (const [size, tries] of [
      [LIMIT + 1, 10],
      [4 * LIMIT, 10],
      [2 * 1024 * 1024, 20],
      [8 * 1024 * 1024, 20],
    ]) {
      const key = `${size} bytes`;
      expected[key] = { '413 error shape': tries };
      for (let i = 0; i < tries; i++) {
        const outcome = await once(size);
        (outcomes[key] ??= {})[outcome] = (outcomes[key]?.[outcome] ?? 0) + 1;
      }
    }
    expect(outcomes).toEqual(expected);
  });

  it('a 413 leaves the gateway serving', async () => {
    expect((await call(gateway, '/health')).status).toBe(200);
  });
});
