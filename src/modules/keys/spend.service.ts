import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { BudgetPeriod, budgetPeriodStart } from './key-limits';

/** Spend of a key in its current budget period, summed from the request log (admin reads only). */
@Injectable()
export class SpendService {
  constructor(private readonly dataSource: DataSource) {}

  async spentUsd(column: 'api_key_id' | 'virtual_key_id', id: string, period: BudgetPeriod | null): Promise<number> {
    const since = budgetPeriodStart(period) ?? new Date(0);
    const [row] = await this.dataSource.query(
      `select coalesce(sum(cost_usd), 0)::float8 as spent from request_logs where ${column} = $1 and created_at >= $2`,
      [id, since],
    );
    return Number(row.spent);
  }
}
