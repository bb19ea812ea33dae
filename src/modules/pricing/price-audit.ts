import type { AuditedRequest, ResourceView } from '../audit/audit-target';
import type { PriceQueryDto } from './dto/price.dto';

/**
 * The audit log's view of a price override (organisation-wide, named `provider/model`):
 * read through the admin list, as `GET /v1/prices?provider=&model=` shows it. The body is
 * read before validation, so anything but strings means there is nothing to show.
 */
/** What the reader needs of PricesController (named structurally: the controller imports this file). */
interface PriceLister {
  list(query: PriceQueryDto): Promise<unknown>;
}

export async function overrideOf(controller: PriceLister, { params, body }: AuditedRequest): Promise<ResourceView | null> {
  const provider = params.provider ?? body.provider;
  const model = Array.isArray(params.model) ? params.model.join('/') : (params.model ?? (typeof body.model === 'string' ? body.model.trim() : undefined));
  if (typeof provider !== 'string' || typeof model !== 'string') return null;
  const list = (await controller.list({ provider, model } as PriceQueryDto)) as { data?: ResourceView[] };
  return list.data?.find((entry) => entry.source === 'override' && entry.model === model) ?? null;
}

export const priceIdOf = (view: ResourceView): string => `${String(view.provider)}/${String(view.model)}`;
