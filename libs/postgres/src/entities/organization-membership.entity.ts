import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  UpdateDateColumn,
} from 'typeorm';
import { User } from './user.entity';

/** PostHog's organization membership levels. */
export enum MembershipLevel {
  Member = 1,
  Admin = 8,
  Owner = 15,
}

export const MEMBERSHIP_LEVELS: readonly MembershipLevel[] = [
  MembershipLevel.Member,
  MembershipLevel.Admin,
  MembershipLevel.Owner,
];

@Entity('organization_memberships')
export class OrganizationMembership {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('int', { name: 'user_id' })
  userId!: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: User;

  @Column('smallint')
  level!: MembershipLevel;

  @CreateDateColumn({ name: 'joined_at', type: 'timestamptz' })
  joinedAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
