import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A registered MCP server (CONTRACT section 10), reached by slug. */
@Entity('mcp_servers')
export class McpServerEntity {
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
  url: string;

  /** Headers sent to the server (credentials): each value AES-256-GCM ciphertext. */
  @Column('jsonb', { default: () => "'{}'" })
  headers: Record<string, string>;

  /** The tools callers may use on this server (null: every tool it lists). */
  @Column('jsonb', { name: 'allowed_tools', nullable: true })
  allowedTools: string[] | null;

  @Column('text', { nullable: true })
  description: string | null;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
