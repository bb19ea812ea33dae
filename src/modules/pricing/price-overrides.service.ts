import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import { ProviderRegistry } from '../../providers/registry';
import { KeyChangeNotifier } from '../keys/key-change-notifier.service';
import type { PriceUpsertDto } from './dto/price.dto';
import { CATALOG_PACKAGE, catalogModels } from './price-catalog';
import { PRICE_FIELDS, priceToFields, type PriceFields } from './price-fields';
import { PricingService } from './pricing.service';

interface OverrideRow extends PriceFields {
  provider: string;
  model: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = ['provider', 'model', ...PRICE_FIELDS] as const;

/**
 * The operator's prices (`/v1/prices`). All overrides are held in memory by PricingService
 * (no database trip per request); a change reloads them here and, through
 * KeyChangeNotifier's LISTEN/NOTIFY, on every other instance.
 */
@Injectable()
export class PriceOverridesService implements OnModuleInit {
  private readonly logger = new Logger(PriceOverridesService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly pricing: PricingService,
    private readonly registry: ProviderRegistry,
    private readonly changes: KeyChangeNotifier,
  ) {}

  async onModuleInit(): Promise<void> {
    this.changes.onChange('prices', () => void this.reload());
    await this.reload();
  }

  async upsert(dto: PriceUpsertDto): Promise<Record<string, unknown>> {
    if (!this.registry.has(dto.provider)) {
      throw GatewayError.invalidRequest(`Unknown provider '${dto.provider}'. Known providers: ${this.registry.ids().join(', ')}`, 'provider');
    }
    const values = COLUMNS.map((column) => (column === 'model' ? dto.model.trim() : (dto[column] ?? null)));
    const [row] = (await this.dataSource.query(
      `insert into price_overrides (${COLUMNS.join(', ')}) values (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})
       on conflict (provider, model) do update set ${PRICE_FIELDS.map((f) => `${f} = excluded.${f}`).join(', ')}, updated_at = now()
       returning *`,
      values,
    )) as OverrideRow[];
    await this.changes.changed('prices');
    return overrideEntry(row);
  }

  async remove(provider: string, model: string): Promise<void> {
    const [, deleted] = (await this.dataSource.query('delete from price_overrides where provider = $1 and model = $2', [provider, model])) as [unknown, number];
    if (!deleted) throw GatewayError.notFound(`No price override for provider '${provider}' and model '${model}'`);
    await this.changes.changed('prices');
  }

  /** The catalog's entries for the provider (or the one that prices `model`) and the overrides, each with its source. */
  async list(provider?: string, model?: string): Promise<Record<string, unknown>> {
    const conditions: string[] = [];
    const params: string[] = [];
    if (provider) conditions.push(`provider = $${params.push(provider)}`);
    if (model) conditions.push(`model = $${params.push(model)}`);
    const rows = (await this.dataSource.query(
      `select * from price_overrides ${conditions.length ? `where ${conditions.join(' and ')}` : ''} order by provider, model`,
      params,
    )) as OverrideRow[];
    const data: Record<string, unknown>[] = rows.map(overrideEntry);
    const providers = provider ? [provider] : model ? this.registry.ids() : [];
    for (const p of providers) {
      if (model) {
        const priced = this.pricing.pricedBy(p, model, new Date());
        // The catalog's (or local table's) price even when an override hides it, so both can be compared.
        const underneath = priced?.source === 'override' ? this.pricing.pricedBelowOverrides(p, model, new Date()) : priced;
        if (underneath) data.push({ provider: p, model, source: underneath.source, catalog_model: underneath.catalogModel, ...priceToFields(underneath.price) });
      } else {
        const now = new Date();
        for (const entry of catalogModels(p)) data.push({ provider: p, model: entry.catalogModel, source: 'catalog', ...priceToFields(entry.priceAt(now)) });
      }
    }
    return { object: 'list', catalog: CATALOG_PACKAGE, data };
  }

  private async reload(): Promise<void> {
    try {
      const rows = (await this.dataSource.query(`select ${COLUMNS.join(', ')} from price_overrides`)) as OverrideRow[];
      this.pricing.setOverrides(rows.map((row) => ({ provider: row.provider, model: row.model, fields: row })));
    } catch (error) {
      // Keep the overrides already loaded; the next change or reconnect reloads.
      this.logger.warn(`Could not load price overrides: ${(error as Error).message}`);
    }
  }
}

function overrideEntry(row: OverrideRow): Record<string, unknown> {
  const entry: Record<string, unknown> = { provider: row.provider, model: row.model, source: 'override' };
  for (const field of PRICE_FIELDS) entry[field] = row[field] ?? null;
  return { ...entry, created_at: row.created_at, updated_at: row.updated_at };
}
