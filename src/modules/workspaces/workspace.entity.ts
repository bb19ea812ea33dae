import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { numericColumn } from '../../database/column-transformers';
import type { BudgetPeriod, RateLimit } from '../../context/key-limits';

/** The workspace every row created before workspaces existed moved into (migration Workspaces). */
export const DEFAULT_WORKSPACE_ID = '00000000-0000-4000-8000-000000000001';
export const DEFAULT_WORKSPACE_SLUG = 'default';

/**
 * A team's own corner of the gateway (CONTRACT section 13): API keys, virtual keys,
 * configs, prompts, MCP servers, end users and log rows each belong to one. Its budget
 * and rate limits hold across all its keys.
 */
@Entity('workspaces')
export class WorkspaceEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('text')
  name: string;

  @Column('text')
  slug: string;

  @Column('numeric', { name: 'budget_limit_usd', precision: 14, scale: 6, nullable: true, transformer: numericColumn })
  budgetLimitUsd: number | null;

  @Column('text', { name: 'budget_period', nullable: true })
  budgetPeriod: BudgetPeriod | null;

  @Column('jsonb', { name: 'rate_limits', default: () => "'[]'" })
  rateLimits: RateLimit[];

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
