import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { BudgetPeriod, budgetPeriodStart } from '../../context/key-limits';

/**
 * What a key has spent in its current budget period, summed from the request log (admin
 * reads only). The budget counters that enforce the limit settle in the statement that
 * writes the log rows, so both agree; the log also covers keys without a budget. Requests
 * that consumed something (tokens, billed units) at a model without a known price add no
 * made-up $0: they are counted apart as `unpriced_requests`, so the spend reads "$X + N
 * unpriced" wherever it is shown.
 */
@Injectable()
export class SpendService {
  constructor(private readonly dataSource: DataSource) {}

  async budgetStatus(
    column: 'api_key_id' | 'virtual_key_id' | 'end_user' | 'workspace_id',
    row: { id: string; user?: string; workspaceId?: string; budgetLimitUsd: number | null; budgetPeriod: BudgetPeriod | null },
  ): Promise<{ spent_usd: number; unpriced_requests: number; budget_remaining_usd: number | null; budget_period_start: string | null }> {
    const periodStart = budgetPeriodStart(row.budgetPeriod);
    // An end user is a `user` inside one workspace: the same name elsewhere is someone else.
    const endUser = column === 'end_user';
    const [spent] = await this.dataSource.query<{ spent: number; unpriced: number }[]>(
      `select coalesce(sum(cost_usd), 0)::float8 as spent,
              count(*) filter (where cost_usd is null and (coalesce(prompt_tokens, 0) + coalesce(completion_tokens, 0) > 0 or billed_units is not null))::int as unpriced
         from request_logs where ${column} = $1 and created_at >= $2${endUser ? ' and workspace_id = $3' : ''}`,
      [endUser ? row.user : row.id, periodStart ?? new Date(0), ...(endUser ? [row.workspaceId] : [])],
    );
    const spentUsd = Number(spent.spent);
    return {
      spent_usd: spentUsd,
      unpriced_requests: Number(spent.unpriced),
      budget_remaining_usd: row.budgetLimitUsd === null ? null : Math.max(0, row.budgetLimitUsd - spentUsd),
      budget_period_start: periodStart?.toISOString() ?? null,
    };
  }
}
