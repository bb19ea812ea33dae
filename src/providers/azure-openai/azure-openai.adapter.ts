import { GatewayError } from '../../common/errors/gateway-error';
import { jsonPayload } from '../../common/http/received-body';
import type { ProviderTarget } from '../provider-target';
import { openAIBatches } from '../openai/batches';
import type { ProviderAdapter, RealtimeCapability, RequestBuilder, ResourceCapability, ResponsesCapability, UpstreamRequest } from '../provider-adapter';

export const AZURE_DEFAULT_API_VERSION = '2024-10-21';
/** The Responses API is served under a preview API version only. */
export const AZURE_RESPONSES_API_VERSION = '2025-04-01-preview';
export const AZURE_REALTIME_API_VERSION = '2024-10-01-preview';

/**
 * Azure OpenAI: OpenAI's wire format behind a per-resource deployment URL,
 * `{host}/openai/deployments/{deployment}/{operation}?api-version=…` (operation:
 * `chat/completions`, `embeddings`, `images/generations`, `audio/speech`,
 * `audio/transcriptions`, `audio/translations`), with the credential in an
 * `api-key` header. The host is `custom_host` or
 * `https://{provider_options.resource_name}.openai.azure.com`; the deployment is
 * `provider_options.deployment`, else the model name. The Responses API is per resource,
 * not per deployment: `{host}/openai/responses?api-version=…`, the deployment named by
 * `model` in the body.
 */
export class AzureOpenAIAdapter implements ProviderAdapter {
  readonly id = 'azure-openai';
  readonly credentialOptional = false;
  readonly requiresCustomHost = false;
  readonly chatCompletions = this.operation('chat/completions');
  readonly embeddings = this.operation('embeddings');
  readonly imageGenerations = this.operation('images/generations');
  readonly audioSpeech = this.operation('audio/speech');
  readonly audioTranscriptions = this.operation('audio/transcriptions');
  readonly audioTranslations = this.operation('audio/translations');
  readonly responses: ResponsesCapability = {
    buildRequest: (body, target) => ({ method: 'POST', url: this.responsesUrl(target, '', ''), headers: this.headers(target), body: jsonPayload(body) }),
    resourceRequest: (method, path, query, target) => ({ method, url: this.responsesUrl(target, path, query), headers: this.headers(target) }),
  };

  /** Realtime is per resource under a preview API version: `{host}/openai/realtime?api-version=…&deployment=…`, over ws(s). */
  readonly realtime: RealtimeCapability = {
    connection: (target, model) => {
      const apiVersion = encodeURIComponent(target.providerOptions.api_version ?? AZURE_REALTIME_API_VERSION);
      const deployment = encodeURIComponent(target.providerOptions.deployment ?? model);
      const headers = this.headers(target);
      delete headers['content-type'];
      return { url: `${this.host(target).replace(/^http/i, 'ws')}/openai/realtime?api-version=${apiVersion}&deployment=${deployment}`, headers };
    },
  };

  readonly fineTuning = this.resource('/fine_tuning/jobs');
  readonly models = this.resource('/models');
  readonly files = this.resource('/files');
  readonly vectorStores = this.resource('/vector_stores');
  /** Azure's Batch API (global batch deployments): OpenAI's, per resource, under `/openai/files` and `/openai/batches`. */
  readonly batches = openAIBatches({ files: this.files, batches: this.resource('/batches'), azure: true });

  /** Resources of the Azure OpenAI resource itself: `{host}/openai{root}{path}?api-version=…`. */
  private resource(root: string): ResourceCapability {
    return {
      request: (method, path, query, target, body) => {
        const apiVersion = encodeURIComponent(target.providerOptions.api_version ?? AZURE_DEFAULT_API_VERSION);
        const url = `${this.host(target)}/openai${root}${path}?api-version=${apiVersion}${query ? `&${query}` : ''}`;
        return { method, url, headers: this.headers(target), ...(body ? { body: JSON.stringify(body) } : {}) };
      },
    };
  }

  private responsesUrl(target: ProviderTarget, path: string, query: string): string {
    const apiVersion = encodeURIComponent(target.providerOptions.api_version ?? AZURE_RESPONSES_API_VERSION);
    return `${this.host(target)}/openai/responses${path}?api-version=${apiVersion}${query ? `&${query}` : ''}`;
  }

  private headers(target: ProviderTarget): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (target.apiKey) headers['api-key'] = target.apiKey;
    return headers;
  }

  private operation(path: string): RequestBuilder {
    return { buildRequest: (body, target) => this.post(path, body, target) };
  }

  private post(operation: string, body: Record<string, unknown>, target: ProviderTarget): UpstreamRequest {
    const options = target.providerOptions;
    const deployment = options.deployment ?? (typeof body.model === 'string' ? body.model : undefined);
    if (!deployment) throw GatewayError.invalidRequest('Azure OpenAI needs a deployment: provider_options.deployment or model', 'model');
    const apiVersion = encodeURIComponent(options.api_version ?? AZURE_DEFAULT_API_VERSION);
    const url = `${this.host(target)}/openai/deployments/${encodeURIComponent(deployment)}/${operation}?api-version=${apiVersion}`;
    return { method: 'POST', url, headers: this.headers(target), body: jsonPayload(body) };
  }

  private host(target: ProviderTarget): string {
    if (target.customHost) return target.customHost.replace(/\/+$/, '');
    const resource = target.providerOptions.resource_name;
    if (!resource) {
      throw GatewayError.invalidRequest('Azure OpenAI needs custom_host or provider_options.resource_name', 'custom_host');
    }
    return `https://${resource}.openai.azure.com`;
  }
}
