import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { numericColumn } from '../../../database/column-transformers';
import { BudgetPeriod } from '../../../context/key-limits';

/** An end user (the `user` field of requests) managed like a key: a budget of its own. */
@Entity('end_users')
export class EndUserEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** The workspace the row belongs to (CONTRACT section 13). */
  @Column('uuid', { name: 'workspace_id' })
  workspaceId: string;

  @Column('text')
  user: string;

  @Column('numeric', { name: 'budget_limit_usd', precision: 14, scale: 6, nullable: true, transformer: numericColumn })
  budgetLimitUsd: number | null;

  @Column('text', { name: 'budget_period', nullable: true })
  budgetPeriod: BudgetPeriod | null;

  @Column('jsonb', { default: () => "'{}'" })
  metadata: Record<string, string>;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
