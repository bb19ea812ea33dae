import { GatewayError } from '../../common/errors/gateway-error';
import { jsonPayload } from '../../common/http/received-body';
import type { ProviderTarget } from '../provider-target';
import {
  RESOURCE_OPERATIONS,
  type ProviderAdapter,
  type RealtimeCapability,
  type RequestBuilder,
  type ResourceCapability,
  type ResourceOperation,
  type ResponsesCapability,
  type ResponsesSocketCapability,
  type UpstreamRequest,
} from '../provider-adapter';
import type { NativeBatchApi } from '../native-batches';
import { openAIBatches } from '../openai/batches';

/** Operations a vendor may serve in OpenAI's format besides chat completions, and their paths. */
const OPTIONAL_OPERATION_PATHS = {
  embeddings: '/embeddings',
  imageGenerations: '/images/generations',
  audioSpeech: '/audio/speech',
  audioTranscriptions: '/audio/transcriptions',
  audioTranslations: '/audio/translations',
  // Jina's and Cohere's shape, which vLLM and other self-hosted rerankers serve under the OpenAI base.
  rerank: '/rerank',
} as const;

/** REST resources a vendor may serve in OpenAI's format, and their roots. */
const RESOURCE_ROOTS: Record<ResourceOperation, string> = {
  fineTuning: '/fine_tuning/jobs',
  models: '/models',
  files: '/files',
  vectorStores: '/vector_stores',
};

export type OptionalOperation = keyof typeof OPTIONAL_OPERATION_PATHS | ResourceOperation | 'responses' | 'realtime' | 'responsesSocket';

export interface OpenAICompatibleOptions {
  id: string;
  /** Base URL including the version path, e.g. `https://api.groq.com/openai/v1`; null: custom_host required. */
  baseUrl: string | null;
  credentialOptional?: boolean;
  /** Send `OpenAI-Organization` / `OpenAI-Project` (only OpenAI itself knows them). */
  sendsOrganizationHeaders?: boolean;
  /** What the vendor's public API offers besides chat completions (none unless listed). */
  offers?: readonly OptionalOperation[];
  /** The header carrying the credential: `Authorization: Bearer …` (default) or Azure's `api-key`. */
  apiKeyHeader?: 'authorization' | 'api-key';
  /** A query every request carries (Azure AI Foundry's `api-version=…`), ahead of the client's own. */
  fixedQuery?: string;
  /** The vendor has OpenAI's Batch API (`/batches` on files uploaded to `/files`): batches routed to it run there natively. */
  nativeBatches?: boolean;
}

/**
 * Vendors that speak OpenAI's API and differ only in base URL and auth: requests and
 * answers pass through unchanged. OpenAI itself is one of them.
 */
export class OpenAICompatibleAdapter implements ProviderAdapter {
  readonly id: string;
  readonly credentialOptional: boolean;
  readonly requiresCustomHost: boolean;
  readonly chatCompletions: RequestBuilder;
  readonly embeddings?: RequestBuilder;
  readonly imageGenerations?: RequestBuilder;
  readonly audioSpeech?: RequestBuilder;
  readonly audioTranscriptions?: RequestBuilder;
  readonly audioTranslations?: RequestBuilder;
  readonly rerank?: RequestBuilder;
  readonly responses?: ResponsesCapability;
  readonly realtime?: RealtimeCapability;
  readonly responsesSocket?: ResponsesSocketCapability;
  readonly fineTuning?: ResourceCapability;
  readonly models?: ResourceCapability;
  readonly files?: ResourceCapability;
  readonly vectorStores?: ResourceCapability;
  readonly batches?: NativeBatchApi;

  constructor(private readonly options: OpenAICompatibleOptions) {
    this.id = options.id;
    this.credentialOptional = options.credentialOptional ?? false;
    this.requiresCustomHost = options.baseUrl === null;
    this.chatCompletions = this.operation('/chat/completions');
    for (const operation of options.offers ?? []) {
      if (operation === 'responses') this.responses = this.responsesCapability();
      else if (operation === 'realtime') this.realtime = this.realtimeCapability();
      else if (operation === 'responsesSocket') this.responsesSocket = this.responsesSocketCapability();
      else if (isResourceOperation(operation)) this[operation] = this.resource(RESOURCE_ROOTS[operation]);
      else this[operation] = this.operation(OPTIONAL_OPERATION_PATHS[operation]);
    }
    if (options.nativeBatches) this.batches = openAIBatches({ files: this.resource(RESOURCE_ROOTS.files), batches: this.resource('/batches') });
  }

  private responsesCapability(): ResponsesCapability {
    return {
      buildRequest: (body, target) => this.post('/responses', body, target),
      resourceRequest: (method, path, query, target) => ({
        method,
        url: this.url(target, `/responses${path}`, query),
        headers: this.headers(target),
      }),
    };
  }

  /** `{base}/realtime?model=…` with the base's http(s) made ws(s). */
  private realtimeCapability(): RealtimeCapability {
    return {
      connection: (target, model) => {
        const headers = this.headers(target);
        delete headers['content-type'];
        return { url: this.url(target, '/realtime', `model=${encodeURIComponent(model)}`).replace(/^http/i, 'ws'), headers };
      },
    };
  }

  /** `{base}/responses` with the base's http(s) made ws(s). */
  private responsesSocketCapability(): ResponsesSocketCapability {
    return {
      connection: (target) => {
        const headers = this.headers(target);
        delete headers['content-type'];
        return { url: this.url(target, '/responses', '').replace(/^http/i, 'ws'), headers };
      },
    };
  }

  private resource(root: string): ResourceCapability {
    return {
      request: (method, path, query, target, body) => ({
        method,
        url: this.url(target, `${root}${path}`, query),
        headers: this.headers(target),
        ...(body ? { body: JSON.stringify(body) } : {}),
      }),
    };
  }

  private operation(path: string): RequestBuilder {
    return { buildRequest: (body, target) => this.post(path, body, target) };
  }

  /** The client's body unchanged goes as received (OpenAI's format is the vendor's). */
  protected post(path: string, body: Record<string, unknown>, target: ProviderTarget): UpstreamRequest {
    return { method: 'POST', url: this.url(target, path, ''), headers: this.headers(target), body: jsonPayload(body) };
  }

  /** `{base}{path}?{fixed query}&{query}`, either query part left out when empty. */
  private url(target: ProviderTarget, path: string, query: string): string {
    const search = [this.options.fixedQuery, query].filter(Boolean).join('&');
    return `${this.baseUrl(target)}${path}${search ? `?${search}` : ''}`;
  }

  protected baseUrl(target: ProviderTarget): string {
    const base = target.customHost ?? this.options.baseUrl;
    if (!base) throw GatewayError.invalidRequest(`Provider ${this.id} needs a custom host (custom_host or x-gateway-custom-host)`);
    return base.endsWith('/') ? base.slice(0, -1) : base;
  }

  protected headers(target: ProviderTarget): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (target.apiKey) {
      if (this.options.apiKeyHeader === 'api-key') headers['api-key'] = target.apiKey;
      else headers.authorization = `Bearer ${target.apiKey}`;
    }
    if (this.options.sendsOrganizationHeaders) {
      if (target.organization) headers['openai-organization'] = target.organization;
      if (target.project) headers['openai-project'] = target.project;
    }
    return headers;
  }
}

function isResourceOperation(operation: OptionalOperation): operation is ResourceOperation {
  return (RESOURCE_OPERATIONS as readonly string[]).includes(operation);
}
