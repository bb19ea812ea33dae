/**
 * What a provider bills a request its Batch API ran, as a share of the synchronous price.
 * The price catalog (`@pydantic/genai-prices`) has no batch prices (its notes mention batch
 * tiers, its prices do not), so the providers' published discounts are applied here, to
 * whatever prices the usage (override, local table, catalog). Only natively run batch
 * lines get it: a line the gateway runs itself is a synchronous call, billed as one.
 */

/** OpenAI's Batch API: "50% cost discount compared to synchronous APIs" (https://platform.openai.com/docs/guides/batch, https://openai.com/api/pricing/). */
export const OPENAI_BATCH_PRICE_FACTOR = 0.5;

/** Azure OpenAI's global batch deployments: "50% less cost than global standard" (https://learn.microsoft.com/azure/ai-foundry/openai/how-to/batch, https://azure.microsoft.com/pricing/details/cognitive-services/openai-service/). */
export const AZURE_OPENAI_BATCH_PRICE_FACTOR = 0.5;

/** Anthropic's Message Batches API: "reducing costs by 50%", on every kind of token (https://docs.anthropic.com/en/docs/build-with-claude/batch-processing, https://www.anthropic.com/pricing#api). */
export const ANTHROPIC_BATCH_PRICE_FACTOR = 0.5;

const FACTORS: Readonly<Record<string, number>> = {
  openai: OPENAI_BATCH_PRICE_FACTOR,
  'azure-openai': AZURE_OPENAI_BATCH_PRICE_FACTOR,
  anthropic: ANTHROPIC_BATCH_PRICE_FACTOR,
};

/** The share of the synchronous price a provider bills for a batch request (1: it has no batch discount). */
export function batchPriceFactor(provider: string): number {
  return FACTORS[provider] ?? 1;
}
