import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { numericColumn } from '../../../database/column-transformers';
import { BudgetPeriod, RateLimit } from '../../../context/key-limits';

/** A provider credential stored by the gateway, referenced by slug in `x-gateway-virtual-key`. */
@Entity('virtual_keys')
export class VirtualKeyEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** The workspace the row belongs to (CONTRACT section 13). */
  @Column('uuid', { name: 'workspace_id' })
  workspaceId: string;

  @Column('text')
  name: string;

  @Column('text')
  slug: string;

  @Column('text')
  provider: string;

  /** AES-256-GCM ciphertext of the provider credential (null for keyless hosts such as Ollama). */
  @Column('text', { name: 'encrypted_key', nullable: true })
  encryptedKey: string | null;

  @Column('text', { name: 'key_hint', nullable: true })
  keyHint: string | null;

  @Column('text', { name: 'provider_organization', nullable: true })
  providerOrganization: string | null;

  @Column('text', { name: 'provider_project', nullable: true })
  providerProject: string | null;

  @Column('text', { name: 'custom_host', nullable: true })
  customHost: string | null;

  /** Provider-specific settings, e.g. Azure's `api_version` and `deployment`. */
  @Column('jsonb', { name: 'provider_options', default: () => "'{}'" })
  providerOptions: Record<string, string>;

  @Column('numeric', { name: 'budget_limit_usd', precision: 14, scale: 6, nullable: true, transformer: numericColumn })
  budgetLimitUsd: number | null;

  @Column('text', { name: 'budget_period', nullable: true })
  budgetPeriod: BudgetPeriod | null;

  @Column('jsonb', { name: 'rate_limits', default: () => "'[]'" })
  rateLimits: RateLimit[];

  @Column('jsonb', { name: 'allowed_models', nullable: true })
  allowedModels: string[] | null;

  /** MCP servers (slugs) this key may use; null: see McpAccessFields. */
  @Column('jsonb', { name: 'allowed_mcp_servers', nullable: true })
  allowedMcpServers: string[] | null;

  /** Per MCP server slug, the tools this key may call there. */
  @Column('jsonb', { name: 'allowed_tools', nullable: true })
  allowedMcpTools: Record<string, string[]> | null;

  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt: Date | null;

  @Column('boolean', { default: false })
  disabled: boolean;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt: Date | null;

  /** Newest created_at of this key's stored log rows; set by the log writer per batch, never by a save here. */
  @Column({ type: 'timestamptz', name: 'last_used_at', nullable: true, insert: false, update: false })
  lastUsedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
