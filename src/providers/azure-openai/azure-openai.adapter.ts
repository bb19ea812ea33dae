import { GatewayError } from '../../common/errors/gateway-error';
import type { RouteTarget } from '../../modules/routing/route-plan';
import type { ProviderAdapter, RequestBuilder, UpstreamRequest } from '../provider-adapter';

export const AZURE_DEFAULT_API_VERSION = '2024-10-21';

/**
 * Azure OpenAI: OpenAI's wire format behind a per-resource deployment URL,
 * `{host}/openai/deployments/{deployment}/{operation}?api-version=…` (operation:
 * `chat/completions`, `embeddings`, `images/generations`), with the credential in an
 * `api-key` header. The host is `custom_host` or
 * `https://{provider_options.resource_name}.openai.azure.com`; the deployment is
 * `provider_options.deployment`, else the model name.
 */
export class AzureOpenAIAdapter implements ProviderAdapter {
  readonly id = 'azure-openai';
  readonly credentialOptional = false;
  readonly requiresCustomHost = false;
  readonly chatCompletions = this.operation('chat/completions');
  readonly embeddings = this.operation('embeddings');
  readonly imageGenerations = this.operation('images/generations');

  private operation(path: string): RequestBuilder {
    return { buildRequest: (body, target) => this.post(path, body, target) };
  }

  private post(operation: string, body: Record<string, unknown>, target: RouteTarget): UpstreamRequest {
    const options = target.providerOptions;
    const deployment = options.deployment ?? (typeof body.model === 'string' ? body.model : undefined);
    if (!deployment) throw GatewayError.invalidRequest('Azure OpenAI needs a deployment: provider_options.deployment or model', 'model');
    const apiVersion = encodeURIComponent(options.api_version ?? AZURE_DEFAULT_API_VERSION);
    const url = `${this.host(target)}/openai/deployments/${encodeURIComponent(deployment)}/${operation}?api-version=${apiVersion}`;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (target.apiKey) headers['api-key'] = target.apiKey;
    return { method: 'POST', url, headers, body: JSON.stringify(body) };
  }

  private host(target: RouteTarget): string {
    if (target.customHost) return target.customHost.replace(/\/+$/, '');
    const resource = target.providerOptions.resource_name;
    if (!resource) {
      throw GatewayError.invalidRequest('Azure OpenAI needs custom_host or provider_options.resource_name', 'custom_host');
    }
    return `https://${resource}.openai.azure.com`;
  }
}
