import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import { listPage } from '../../common/http/list.dto';
import { ProviderRegistry } from '../../providers/registry';
import { KeyChangeNotifier } from '../keys/key-change-notifier';
import type { PriceUpsertDto } from './dto/price.dto';
import { CATALOG_PACKAGE, catalogModels } from './price-catalog';
import { PRICE_FIELDS, priceToFields, type PriceFields } from './price-fields';
import { PricingService, type PriceSource } from './pricing.service';

export interface OverrideRow extends PriceFields {
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

  /**
   * `GET /v1/prices`: the prices of every provider the gateway routes to (or the one asked
   * for), each with its source: the operator's overrides, the local table's, and the
   * catalog's own list for the provider. With `model`, the price that applies to that name
   * (matched as requests are: dated snapshots, fallbacks) and, where an override hides it,
   * the one underneath, so both can be compared. Ordered by provider, model, then source in
   * the order they win (override, local, catalog), and paged with an opaque cursor on that key.
   */
  async list(query: { provider?: string; model?: string; limit?: number; cursor?: string }): Promise<Record<string, unknown>> {
    const { provider, model } = query;
    const limit = query.limit ?? 50;
    const after = query.cursor === undefined ? null : parseCursor(query.cursor);
    const conditions: string[] = [];
    const params: string[] = [];
    if (provider) conditions.push(`provider = $${params.push(provider)}`);
    if (model) conditions.push(`model = $${params.push(model)}`);
    const rows = (await this.dataSource.query(
      `select * from price_overrides ${conditions.length ? `where ${conditions.join(' and ')}` : ''}`,
      params,
    )) as OverrideRow[];
    const entries: PriceEntry[] = rows.map(overrideEntry);
    const now = new Date();
    for (const p of provider ? [provider] : this.registry.ids()) {
      if (model) {
        const priced = this.pricing.pricedBy(p, model, now);
        const underneath = priced?.source === 'override' ? this.pricing.pricedBelowOverrides(p, model, now) : priced;
        if (underneath)
          entries.push({ provider: p, model, source: underneath.source, ...catalogNames(underneath.catalogModel), ...priceToFields(underneath.price) });
        continue;
      }
      for (const local of this.pricing.localEntries(p)) {
        entries.push({
          provider: p,
          model: local.model,
          source: 'local',
          ...priceToFields(local.price),
          ...(local.imagePrices ? { per_image_by_quality_and_size: local.imagePrices } : {}),
        });
      }
      for (const entry of catalogModels(p)) {
        entries.push({
          provider: p,
          model: entry.catalogModel,
          source: 'catalog',
          catalog_provider: entry.catalogProvider,
          ...priceToFields(entry.priceAt(now)),
        });
      }
    }
    const ordered = uniqueSorted(entries).filter((entry) => after === null || compareKeys(keyOf(entry), after) > 0);
    const page = listPage(ordered.slice(0, limit + 1), limit, (entry) => Buffer.from(JSON.stringify(keyOf(entry))).toString('base64url'));
    return { object: 'list', catalog: CATALOG_PACKAGE, data: page.data, next_cursor: page.next_cursor };
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

type PriceEntry = Record<string, unknown> & { provider: string; model: string; source: PriceSource };
type EntryKey = [provider: string, model: string, sourceRank: number];

/** Sources in the order they win, which is also their order in the list. */
const SOURCE_RANK: Record<PriceSource, number> = { override: 0, local: 1, catalog: 2 };

const keyOf = (entry: PriceEntry): EntryKey => [entry.provider, entry.model, SOURCE_RANK[entry.source]];

function compareKeys(a: EntryKey, b: EntryKey): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

/** Sorted by key, one entry per key (the paging cursor is a key, so keys must be unique). */
function uniqueSorted(entries: PriceEntry[]): PriceEntry[] {
  const sorted = entries.map((entry) => ({ entry, key: keyOf(entry) })).sort((a, b) => compareKeys(a.key, b.key));
  return sorted.filter((item, i) => i === 0 || compareKeys(sorted[i - 1].key, item.key) !== 0).map((item) => item.entry);
}

function parseCursor(cursor: string): EntryKey {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    key = null;
  }
  if (!Array.isArray(key) || key.length !== 3 || typeof key[0] !== 'string' || typeof key[1] !== 'string' || typeof key[2] !== 'number') {
    throw GatewayError.invalidRequest('cursor is not a cursor this endpoint returned', 'cursor');
  }
  return key as EntryKey;
}

const catalogNames = (catalogModel: string | undefined) => (catalogModel === undefined ? {} : { catalog_model: catalogModel });

/** An override's entry (PriceEntryResponseDto), as POST /v1/prices answers it. */
export function overrideEntry(row: OverrideRow): PriceEntry {
  const entry: PriceEntry = { provider: row.provider, model: row.model, source: 'override' };
  for (const field of PRICE_FIELDS) entry[field] = row[field] ?? null;
  return { ...entry, created_at: row.created_at, updated_at: row.updated_at };
}
