import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** One immutable version of a stored config; `configs` holds the latest. */
@Entity('config_versions')
export class ConfigVersionEntity {
  @PrimaryColumn('uuid', { name: 'config_id' })
  configId: string;

  @PrimaryColumn('integer')
  version: number;

  @Column('text')
  name: string;

  /** As in `configs`: every `api_key` is ciphertext. */
  @Column('jsonb')
  config: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
