import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { PromptTemplate } from '../prompt-template';

/** One immutable version of a prompt template; `prompts` holds the latest. */
@Entity('prompt_versions')
export class PromptVersionEntity {
  @PrimaryColumn('uuid', { name: 'prompt_id' })
  promptId: string;

  @PrimaryColumn('integer')
  version: number;

  @Column('text')
  name: string;

  @Column('jsonb')
  template: PromptTemplate;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
