import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A gateway config (CONTRACT section 5) stored under a slug; credentials inside are encrypted. */
@Entity('configs')
export class StoredConfigEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** The workspace the row belongs to (CONTRACT section 13). */
  @Column('uuid', { name: 'workspace_id' })
  workspaceId: string;

  @Column('text')
  name: string;

  @Column('text')
  slug: string;

  /** The config as given, with every `api_key` replaced by its ciphertext. */
  @Column('jsonb')
  config: Record<string, unknown>;

  /** The latest version; every version, this one included, is also in `config_versions`. */
  @Column('integer', { default: 1 })
  version: number;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
