import type { EventSourceMessage } from 'eventsource-parser';
import type { ProviderTarget } from './provider-target';
import type { ChatTranslation, OpenAIErrorBody } from './chat-format';
import type { NativeBatchApi } from './native-batches';
import type { UpstreamRequest } from './upstream-request';

export type { UpstreamRequest } from './upstream-request';

/**
 * One operation of a provider: builds the request for a body (in the operation's own
 * format, model and override_params applied). `headers` are request headers the
 * operation passes on to the vendor (`anthropic-version` and `anthropic-beta` on
 * messages); the adapter never forwards anything else of the client's.
 */
export interface RequestBuilder {
  buildRequest(body: Record<string, unknown>, target: ProviderTarget, headers?: Record<string, string>): UpstreamRequest;
}

/**
 * Chat completions. Without `translation` the vendor speaks OpenAI's format and its
 * answers pass through byte for byte; with it, `buildRequest` translates the body and
 * `translation` the answers (see chat-format.ts).
 */
export interface ChatCompletionsCapability extends RequestBuilder {
  readonly translation?: ChatTranslation;
}

/**
 * The answers of a JSON operation (embeddings, rerank) whose vendor speaks a format of its
 * own (Cohere's `/embed`): `toAnswer` turns the vendor's JSON into the operation's, given
 * the body as sent (model rewritten, overrides applied), e.g. for `encoding_format`, and the
 * answer's headers (Bedrock counts tokens in `x-amzn-bedrock-input-token-count`, not the body);
 * `toOpenAIError` its error answers into OpenAI's error shape (the status kept; the headers
 * carry AWS's error name).
 */
export interface JsonAnswerTranslation {
  toAnswer(answer: Record<string, unknown>, body: Record<string, unknown>, headers: UpstreamHeaders): Record<string, unknown>;
  toOpenAIError(status: number, body: unknown, headers?: Record<string, string>): OpenAIErrorBody;
}

/** A provider's answer headers as the HTTP client hands them over. */
export type UpstreamHeaders = Readonly<Record<string, string | string[] | undefined>>;

/**
 * For a vendor that takes fewer inputs in one request than a client may send (Titan embeds
 * one text per InvokeModel, Cohere on Bedrock 96): `split` turns the body as sent into the
 * bodies of several requests (null: one request, the body as it is); each is built, signed
 * and sent on its own and its answer translated; `merge` makes the one answer of the
 * translated answers, in the order of the parts. Any part's failure fails the whole.
 */
export interface JsonFanOut {
  split(body: Record<string, unknown>): Record<string, unknown>[] | null;
  merge(answers: Record<string, unknown>[], body: Record<string, unknown>): Record<string, unknown>;
}

/** A JSON operation; without `translation` the vendor's answer is the operation's format already. */
export interface JsonOperationCapability extends RequestBuilder {
  readonly translation?: JsonAnswerTranslation;
  readonly fanOut?: JsonFanOut;
}

/**
 * OpenAI's Responses API: `buildRequest` creates a response; `resourceRequest` reads or
 * acts on a stored one (`GET /{id}`, `DELETE /{id}`, `GET /{id}/input_items`,
 * `POST /{id}/cancel`). `path` starts with `/` and is already URL-encoded.
 */
export interface ResponsesCapability extends RequestBuilder {
  resourceRequest(method: 'GET' | 'POST' | 'DELETE', path: string, query: string, target: ProviderTarget): UpstreamRequest;
}

/**
 * An OpenAI-style REST resource (fine-tuning jobs, models): `request` builds a call on
 * the resource, `path` relative to its root (`''` for the collection, `/{id}/cancel` …,
 * already URL-encoded), `query` the raw query string, `body` for POSTs.
 */
export interface ResourceCapability {
  request(method: 'GET' | 'POST' | 'DELETE', path: string, query: string, target: ProviderTarget, body?: Record<string, unknown>): UpstreamRequest;
}

/**
 * A vendor's own count of a chat completions body's input tokens (Gemini's
 * `countTokens`): `buildRequest` translates the OpenAI body as the vendor's chat would,
 * `inputTokens` reads the count from the vendor's JSON answer (null when it has none).
 */
export interface ChatInputTokensCapability extends RequestBuilder {
  inputTokens(answer: Record<string, unknown>): number | null;
}

/** Where and how to open a provider's Responses API WebSocket (its "WebSocket mode": `response.create` events in, the stream's events out). */
export interface ResponsesSocketCapability {
  connection(target: ProviderTarget): { url: string; headers: Record<string, string> };
}

/** Where and how to open a provider's realtime WebSocket for a model. */
export interface RealtimeCapability {
  connection(target: ProviderTarget, model: string): { url: string; headers: Record<string, string> };
}

/**
 * Anthropic's Messages API spoken natively. A cloud that hosts Claude beside models of
 * its own (Vertex AI) says which models it serves natively; `/v1/messages` reaches the
 * others through chat completions, as for any provider without this capability.
 */
export interface MessagesCapability extends RequestBuilder {
  servesModel?(model: string): boolean;
  /**
   * For a vendor that wraps Anthropic's stream events in frames of its own (Bedrock's
   * `chunk` events, base64 inside its binary event stream): the Anthropic event a frame
   * carries, null to drop it; throws for a frame that ends the stream with an error.
   */
  streamEvent?(event: EventSourceMessage): EventSourceMessage | null;
  /** For a vendor whose error answers are not Anthropic's (AWS's `{message}`): the error in Anthropic's shape, status kept. */
  toAnthropicError?(status: number, body: unknown, headers?: Record<string, string>): Record<string, unknown>;
}

/**
 * Anthropic's `/messages/count_tokens`, or a cloud's own counter of a Messages body (Claude on
 * Bedrock's CountTokens, on Vertex AI's `count-tokens:rawPredict`). A cloud that hosts Claude
 * beside other models says which models it counts (`servesModel`); the others get the estimate.
 */
export interface MessagesCountTokensCapability extends RequestBuilder {
  servesModel?(model: string): boolean;
  /** For a vendor whose answer is not Anthropic's `{input_tokens}` (Bedrock's `{inputTokens}`): the count, null when it has none. */
  inputTokens?(answer: Record<string, unknown>): number | null;
  /** For a vendor whose error answers are not Anthropic's (AWS's `{message}`): the error in Anthropic's shape, status kept. */
  toAnthropicError?(status: number, body: unknown, headers?: Record<string, string>): Record<string, unknown>;
  /** Whether an error answer says the vendor cannot count this model at all (not that the body is wrong): then the gateway estimates. */
  cannotCount?(status: number, body: unknown): boolean;
}

/**
 * Google's Gemini API spoken natively (the `/v1beta/models/{model}:{method}` routes): the
 * body is Gemini's own, with the gateway's `model` (from the path) and `stream` fields,
 * which `buildRequest` moves into the URL. A cloud that hosts Gemini beside other models
 * (Vertex AI) says which models it serves natively; the others are translated.
 */
export interface GeminiCapability extends RequestBuilder {
  servesModel?(model: string): boolean;
}

/** The operations a provider may offer, one optional capability each. */
export interface ProviderOperations {
  readonly chatCompletions?: ChatCompletionsCapability;
  readonly embeddings?: JsonOperationCapability;
  /** `/rerank` in Cohere's and Jina's shape (`{model, query, documents, top_n}` → `{results: [{index, relevance_score}]}`). */
  readonly rerank?: JsonOperationCapability;
  readonly imageGenerations?: RequestBuilder;
  /** Text to speech: a JSON body in, audio bytes out. */
  readonly audioSpeech?: RequestBuilder;
  /** Speech to text, and to English text: a multipart upload in (the builder gives URL and auth; the form goes through as sent). */
  readonly audioTranscriptions?: RequestBuilder;
  readonly audioTranslations?: RequestBuilder;
  /** The Realtime API: a WebSocket the gateway relays events through. */
  readonly realtime?: RealtimeCapability;
  /** The Responses API over a WebSocket (`GET /v1/responses` upgraded), relayed event by event. */
  readonly responsesSocket?: ResponsesSocketCapability;
  readonly responses?: ResponsesCapability;
  /** Anthropic's Messages API spoken natively; `/v1/messages` reaches other providers through chat completions. */
  readonly messages?: MessagesCapability;
  /** Anthropic's `/messages/count_tokens`: a Messages body's input tokens, counted by the vendor (same headers as `messages`). */
  readonly messagesCountTokens?: MessagesCountTokensCapability;
  /** The input tokens of a chat body counted by a vendor that has no Messages API but a counter of its own (Gemini). */
  readonly chatInputTokens?: ChatInputTokensCapability;
  /** Gemini's `generateContent` / `streamGenerateContent` (`?alt=sse`), for `/v1beta/models/{model}:generateContent`. */
  readonly generateContent?: GeminiCapability;
  /** Gemini's `countTokens` of a Gemini body. */
  readonly geminiCountTokens?: GeminiCapability;
  /** Gemini's `embedContent` (a body with `content`) or `batchEmbedContents` (a body with `requests`). */
  readonly geminiEmbed?: GeminiCapability;
  /** `/models` in Gemini's shape (`{models: [{name: "models/…", supportedGenerationMethods}], nextPageToken}`). */
  readonly geminiModels?: ResourceCapability;
  /** `/fine_tuning/jobs` and its sub-resources. */
  readonly fineTuning?: ResourceCapability;
  /** `/models`: the provider's model list and one model, in OpenAI's shape. */
  readonly models?: ResourceCapability;
  /** `/models` in Anthropic's shape (`{data: [{type: "model", id, display_name, created_at}], has_more, first_id, last_id}`; `limit`, `before_id`, `after_id`). */
  readonly anthropicModels?: ResourceCapability;
  /** `/files`: uploaded files (listing, metadata, content, deletion). */
  readonly files?: ResourceCapability;
  /** `/vector_stores` and their files, which the `file_search` tool searches. */
  readonly vectorStores?: ResourceCapability;
}

export type ProviderOperation = keyof ProviderOperations;

/** The capabilities that are REST resources in OpenAI's format rather than one request built from a body (`anthropicModels` is one in Anthropic's). */
export const RESOURCE_OPERATIONS = ['fineTuning', 'models', 'files', 'vectorStores'] as const;
export type ResourceOperation = (typeof RESOURCE_OPERATIONS)[number];

/**
 * One provider. Adding a vendor is one folder under `src/providers/` and one line in
 * `registry.ts`; an operation a provider lacks is simply absent, and the gateway
 * answers 400 naming the provider and the operation.
 */
/**
 * Sends a credential request (an OAuth2 token exchange) through the gateway's HTTP
 * client, under the host policy of the target it is for; the answer's status and body.
 * Not tied to one client's request: a token it fetches is shared by concurrent requests.
 */
export type CredentialFetch = (request: UpstreamRequest) => Promise<{ status: number; body: Buffer }>;

export interface ProviderAdapter extends ProviderOperations {
  /** The id used in virtual keys, configs and `x-gateway-provider`. */
  readonly id: string;
  /** Whether requests without a credential make sense (a local Ollama). */
  readonly credentialOptional: boolean;
  /** Whether the provider has no public endpoint and needs `custom_host`. */
  readonly requiresCustomHost: boolean;
  /**
   * An asynchronous credential step run before each `buildRequest` (a cloud whose
   * requests carry a short-lived token minted from the stored credential, Vertex AI):
   * the target to build with, `accessToken` set. Providers whose key goes on the
   * request as it is leave it out, so their attempts take no extra step.
   */
  authorize?<T extends ProviderTarget>(target: T, fetch: CredentialFetch): Promise<T>;
  /**
   * Signs a built request just before it is sent (AWS SigV4 over the final URL, headers
   * and body), for providers whose authentication is a signature rather than a header
   * the builder can set; it may resolve credentials (cached), hence async.
   */
  signRequest?(request: UpstreamRequest, target: ProviderTarget): Promise<UpstreamRequest>;
  /**
   * The request headers that carry this provider's credential on an `x-gateway-provider`
   * route when one bearer key is not enough (AWS's key pair, session token and region):
   * `key` is the header whose value becomes the target's key (instead of Authorization),
   * `options` maps headers to the provider options they set. Every one of them is a
   * secret or close to one: see logging/redaction.ts.
   */
  readonly credentialHeaders?: { readonly key?: string; readonly options?: Readonly<Record<string, string>> };
  /**
   * The provider's own Batch API (OpenAI, Azure OpenAI, Anthropic): a batch routed to this
   * provider alone runs there natively, at the provider's batch price; absent, the gateway
   * runs a batch's lines itself (see the batches module).
   */
  readonly batches?: NativeBatchApi;
}
