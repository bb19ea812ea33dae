import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { numericColumn } from '../../../database/column-transformers';
import { BudgetPeriod, RateLimit } from '../../../context/key-limits';
import type { Role } from '../../workspaces/roles';

export type ApiKeyRole = Role;

/** A gateway API key (`gk-…`). Only the SHA-256 of the secret is stored. */
@Entity('api_keys')
export class ApiKeyEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** The workspace the row belongs to (CONTRACT section 13). */
  @Column('uuid', { name: 'workspace_id' })
  workspaceId: string;

  @Column('text')
  name: string;

  @Column('text')
  role: ApiKeyRole;

  @Column('text', { name: 'key_hash' })
  keyHash: string;

  /** The first and last characters of the secret, to tell keys apart in lists. */
  @Column('text', { name: 'key_hint' })
  keyHint: string;

  @Column('numeric', { name: 'budget_limit_usd', precision: 14, scale: 6, nullable: true, transformer: numericColumn })
  budgetLimitUsd: number | null;

  @Column('text', { name: 'budget_period', nullable: true })
  budgetPeriod: BudgetPeriod | null;

  @Column('jsonb', { name: 'rate_limits', default: () => "'[]'" })
  rateLimits: RateLimit[];

  /** MCP servers (slugs) this key may use; null: see McpAccessFields. */
  @Column('jsonb', { name: 'allowed_mcp_servers', nullable: true })
  allowedMcpServers: string[] | null;

  /** Per MCP server slug, the tools this key may call there. */
  @Column('jsonb', { name: 'allowed_tools', nullable: true })
  allowedMcpTools: Record<string, string[]> | null;

  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt: Date | null;

  @Column('jsonb', { default: () => "'{}'" })
  metadata: Record<string, string>;

  /** Slug of the virtual key that routes this key's requests naming no route (CONTRACT section 12). */
  @Column('text', { name: 'default_virtual_key', nullable: true })
  defaultVirtualKey: string | null;

  /** Slug or id of the stored config that routes this key's requests naming no route; wins over the virtual key. */
  @Column('text', { name: 'default_config', nullable: true })
  defaultConfig: string | null;

  /** The key created from GATEWAY_ADMIN_KEY (or generated at first start). */
  @Column('boolean', { name: 'is_bootstrap', default: false })
  isBootstrap: boolean;

  @Column('timestamptz', { name: 'revoked_at', nullable: true })
  revokedAt: Date | null;

  /** Newest created_at of this key's stored log rows; set by the log writer per batch, never by a save here. */
  @Column({ type: 'timestamptz', name: 'last_used_at', nullable: true, insert: false, update: false })
  lastUsedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
