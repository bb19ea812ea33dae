import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { PromptTemplate } from '../prompt-template';

/** A prompt template under a slug; `template` is its latest version. */
@Entity('prompts')
export class PromptEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** The workspace the row belongs to (CONTRACT section 13). */
  @Column('uuid', { name: 'workspace_id' })
  workspaceId: string;

  @Column('text')
  name: string;

  @Column('text')
  slug: string;

  @Column('jsonb')
  template: PromptTemplate;

  /** The latest version; every version, this one included, is also in `prompt_versions`. */
  @Column('integer', { default: 1 })
  version: number;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
