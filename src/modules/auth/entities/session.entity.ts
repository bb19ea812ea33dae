import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { MappedMembership } from '../../../config/role-mapping';

/** A dashboard session: a person's (SSO) or an API key's (`/auth/key-session`). */
@Entity('sessions')
export class SessionEntity {
  /** SHA-256 (hex) of the cookie's token: the token itself is never stored. */
  @PrimaryColumn('text')
  id: string;

  @Column('uuid', { name: 'user_id', nullable: true })
  userId: string | null;

  /** The API key of a key session, by the hash its row is found by. */
  @Column('text', { name: 'api_key_hash', nullable: true })
  apiKeyHash: string | null;

  /** Workspace slugs and roles from the groups claim at sign-in; slugs resolve at request time. */
  @Column('jsonb')
  memberships: MappedMembership[];

  @Column('text', { name: 'csrf_token_hash' })
  csrfTokenHash: string;

  @Column('timestamptz', { name: 'created_at' })
  createdAt: Date;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt: Date;

  @Column('timestamptz', { name: 'revoked_at', nullable: true })
  revokedAt: Date | null;
}
