import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { RequestContext } from '../../context/request-context';
import { emptyUsage } from '../../providers/usage';
import { PricingService } from '../pricing/pricing.service';
import type { AnswerOutcome } from '../../context/attempt';
import type { RouteTarget } from '../../context/route-plan';

/**
 * Prices fine-tuning by `trained_tokens` (the price table's `training` rates), once per
 * job: the first answer that shows the job `succeeded` (its creation, a retrieval or a
 * list) carries the cost in its log row, with the trained tokens as prompt tokens;
 * `fine_tuning_charges` remembers the job so later reads cost nothing. One database
 * round trip, only for answers with a succeeded job in them.
 */
@Injectable()
export class TrainingCharges {
  private readonly logger = new Logger(TrainingCharges.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly pricing: PricingService,
  ) {}

  /** The usage (trained tokens) and cost of the jobs charged now, or null when none is. */
  async charge(context: RequestContext, answer: Record<string, any>, target: RouteTarget): Promise<Pick<AnswerOutcome, 'usage' | 'costUsd'> | null> {
    const jobs = (answer?.object === 'list' && Array.isArray(answer.data) ? answer.data : [answer]).filter(
      (job: any) =>
        job?.object === 'fine_tuning.job' &&
        job.status === 'succeeded' &&
        typeof job.id === 'string' &&
        Number.isInteger(job.trained_tokens) &&
        job.trained_tokens > 0,
    );
    if (!jobs.length) return null;
    try {
      const rows: { trained: number; cost: number | null }[] = await this.dataSource.query(
        `insert into fine_tuning_charges (provider, job_id, model, trained_tokens, cost_usd, log_id)
         select $1, job->>'id', job->>'model', (job->>'trained_tokens')::bigint, (job->>'cost')::numeric, $2
         from jsonb_array_elements($3::jsonb) as job
         on conflict do nothing
         returning job_id, trained_tokens::float8 as trained, cost_usd::float8 as cost`,
        [
          target.provider,
          context.requestId,
          JSON.stringify(jobs.map((job: any) => ({ ...job, cost: this.pricing.trainingCost(target.provider, String(job.model ?? ''), job.trained_tokens) }))),
        ],
      );
      if (!rows.length) return null;
      const trained = rows.reduce((sum, row) => sum + row.trained, 0);
      const costs = rows.map((row) => row.cost);
      const costUsd = costs.every((cost) => cost !== null) ? Math.round(costs.reduce<number>((sum, cost) => sum + cost, 0) * 1e10) / 1e10 : null;
      return { usage: { ...emptyUsage(), promptTokens: trained, totalTokens: trained }, costUsd };
    } catch (error) {
      // The answer still goes back; the charge is tried again on the next read of the job.
      this.logger.warn(`Fine-tuning charge not recorded: ${(error as Error).message}`);
      return null;
    }
  }
}
