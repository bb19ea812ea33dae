import { Injectable } from '@nestjs/common';
import { GatewayError } from '../common/errors/gateway-error';
import { AzureOpenAIAdapter } from './azure-openai/azure-openai.adapter';
import { anthropicAdapter } from './anthropic/anthropic.adapter';
import { cohereAdapter } from './cohere/cohere.adapter';
import { bedrockAdapter } from './bedrock/bedrock.adapter';
import { googleAdapter } from './google/google.adapter';
import { openAIAdapter } from './openai/openai.adapter';
import { openAICompatibleVendors } from './openai-compatible/vendors';
import { vertexAIAdapter } from './vertex-ai/vertex-ai.adapter';
import type { ProviderAdapter } from './provider-adapter';

/** Every provider the gateway can route to. Add a vendor here after writing its folder. */
const ADAPTERS: ProviderAdapter[] = [
  openAIAdapter,
  new AzureOpenAIAdapter(),
  anthropicAdapter,
  googleAdapter,
  vertexAIAdapter,
  bedrockAdapter,
  cohereAdapter,
  ...openAICompatibleVendors,
];

@Injectable()
export class ProviderRegistry {
  private readonly adapters = new Map(ADAPTERS.map((adapter) => [adapter.id, adapter]));

  ids(): string[] {
    return [...this.adapters.keys()];
  }

  has(id: string): boolean {
    return this.adapters.has(id);
  }

  /** The adapter for a provider id; 400 listing the known ids otherwise. */
  get(id: string): ProviderAdapter {
    const adapter = this.adapters.get(id);
    if (!adapter) {
      throw GatewayError.invalidRequest(`Unknown provider '${id}'. Known providers: ${this.ids().join(', ')}`, 'provider');
    }
    return adapter;
  }
}
