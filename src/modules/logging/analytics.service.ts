import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ApiKeyPrincipal } from '../keys/key-lookup.service';
import type { AnalyticsQueryDto } from './dto/analytics-query.dto';

const DAY_MS = 86_400_000;
/** The column (or expression) each grouping reads; metadata keys are bound as a parameter. */
const GROUP_COLUMNS: Record<string, string> = {
  user: 'log.end_user',
  model: 'log.model',
  provider: 'log.provider',
  operation: 'log.operation',
  api_key: 'log.api_key_id::text',
  virtual_key: 'coalesce(vk.slug, log.virtual_key_id::text)',
};

/**
 * Usage, errors, cost and latency of the request log grouped by one dimension over a
 * time range: what the dashboard charts and what spend per key or per user is read
 * from. Every logged row counts, failed attempts that a retry or fallback followed
 * included (they are requests the gateway made). A user-role key sees only its own rows.
 */
@Injectable()
export class AnalyticsService {
  constructor(private readonly dataSource: DataSource) {}

  async summary(query: AnalyticsQueryDto, caller: ApiKeyPrincipal): Promise<Record<string, unknown>> {
    const to = query.to ? new Date(query.to) : new Date();
    const from = query.from ? new Date(query.from) : new Date(to.getTime() - 30 * DAY_MS);
    if (from >= to) throw GatewayError.invalidRequest('from must be before to', 'from');
    const params: unknown[] = [from, to];
    let key = GROUP_COLUMNS[query.group_by];
    if (!key) {
      params.push(query.group_by.slice('metadata.'.length));
      key = `log.metadata ->> $${params.length}`;
    }
    let scope = '';
    if (caller.role !== 'admin') {
      params.push(caller.id);
      scope = `and log.api_key_id = $${params.length}`;
    }
    const rows = await this.dataSource.query(
      `select ${key} as key,
              count(*)::int as requests,
              (count(*) filter (where log.status_code >= 400 or log.error is not null))::int as errors,
              coalesce(sum(log.prompt_tokens), 0)::float8 as prompt_tokens,
              coalesce(sum(log.completion_tokens), 0)::float8 as completion_tokens,
              coalesce(sum(log.cost_usd), 0)::float8 as cost_usd,
              percentile_cont(0.5) within group (order by log.latency_ms)::float8 as latency_p50_ms,
              percentile_cont(0.95) within group (order by log.latency_ms)::float8 as latency_p95_ms
       from request_logs log
       left join virtual_keys vk on vk.id = log.virtual_key_id
       where log.created_at >= $1 and log.created_at < $2 ${scope}
       group by 1
       order by cost_usd desc, requests desc
       limit 1000`,
      params,
    );
    return { object: 'analytics.summary', group_by: query.group_by, from: from.toISOString(), to: to.toISOString(), data: rows };
  }
}
