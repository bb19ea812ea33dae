import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One admin change (migration AuditLog). Ids are UUIDv7 and `created_at` is set by the gateway, in milliseconds, so the keyset cursor is exact. */
@Entity('audit_log')
export class AuditLogEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column('timestamptz', { name: 'created_at' })
  createdAt: Date;

  @Column('uuid', { name: 'workspace_id', nullable: true })
  workspaceId: string | null;

  @Column('text', { name: 'actor_kind' })
  actorKind: string;

  @Column('text', { name: 'actor_id' })
  actorId: string;

  @Column('text', { name: 'actor_name' })
  actorName: string;

  @Column('text')
  action: string;

  @Column('text')
  resource: string;

  @Column('text', { name: 'resource_id', nullable: true })
  resourceId: string | null;

  @Column('jsonb', { nullable: true })
  before: unknown;

  @Column('jsonb', { nullable: true })
  after: unknown;
}
