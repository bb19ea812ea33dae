import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A person known from an identity provider (issuer + subject), made at their first sign-in. */
@Entity('users')
export class UserEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('text')
  issuer: string;

  @Column('text')
  subject: string;

  @Column('text', { nullable: true })
  email: string | null;

  @Column('text', { nullable: true })
  name: string | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt: Date;

  @Column('timestamptz', { name: 'last_sign_in_at' })
  lastSignInAt: Date;
}
