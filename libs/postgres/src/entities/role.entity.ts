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

/** PostHog's resource access levels (ee OrganizationResourceAccess.AccessLevel). */
export enum ResourceAccessLevel {
  CanOnlyView = 21,
  CanAlwaysEdit = 37,
}

/** A named set of an organization's members, with an access level to feature flags. */
@Entity('roles')
export class Role {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('varchar', { length: 200 })
  name!: string;

  @Column('smallint', { name: 'feature_flags_access_level', default: ResourceAccessLevel.CanAlwaysEdit })
  featureFlagsAccessLevel!: ResourceAccessLevel;

  @Column('int', { name: 'created_by_id', nullable: true })
  createdById!: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'created_by_id' })
  createdBy?: User | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

@Entity('role_memberships')
export class RoleMembership {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'role_id' })
  roleId!: string;

  @Column('int', { name: 'user_id' })
  userId!: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: User;

  @CreateDateColumn({ name: 'joined_at', type: 'timestamptz' })
  joinedAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

/** A role given access to one flag (what lets a "can only view" role edit it). */
@Entity('feature_flag_role_access')
export class FeatureFlagRoleAccess {
  @Column('int', { primary: true, generated: 'increment' })
  id!: number;

  @Column('int', { name: 'feature_flag_id' })
  featureFlagId!: number;

  @Column('uuid', { name: 'role_id' })
  roleId!: string;

  @CreateDateColumn({ name: 'added_at', type: 'timestamptz' })
  addedAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

/** An organization's default level for a resource; no row means "can always edit". */
@Entity('organization_resource_access')
export class OrganizationResourceAccess {
  @Column('int', { primary: true, generated: 'increment' })
  id!: number;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('varchar', { length: 32 })
  resource!: string;

  @Column('smallint', { name: 'access_level', default: ResourceAccessLevel.CanAlwaysEdit })
  accessLevel!: ResourceAccessLevel;

  @Column('int', { name: 'created_by_id', nullable: true })
  createdById!: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
