import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  UpdateDateColumn,
} from 'typeorm';
import { MembershipLevel } from './organization-membership.entity';
import { User } from './user.entity';

@Entity('organization_invites')
export class OrganizationInvite {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('varchar', { name: 'target_email', length: 254 })
  targetEmail!: string;

  @Column('varchar', { name: 'first_name', length: 30, default: '' })
  firstName!: string;

  @Column('int', { name: 'created_by_id', nullable: true })
  createdById!: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'created_by_id' })
  createdBy?: User | null;

  @Column('boolean', { name: 'emailing_attempt_made', default: false })
  emailingAttemptMade!: boolean;

  @Column('smallint', { default: MembershipLevel.Member })
  level!: MembershipLevel;

  @Column('text', { nullable: true })
  message!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
