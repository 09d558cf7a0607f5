import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';
import { User } from './user.entity';

/** PostHog's flag `filters` (groups, variants, payloads, aggregation), validated by the API. */
export type FeatureFlagFilters = Record<string, unknown>;

@Entity('feature_flags')
export class FeatureFlag {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column('int', { name: 'team_id' })
  teamId!: number;

  @Column('varchar', { length: 400 })
  key!: string;

  /** The flag's description (PostHog keeps the name `name`). */
  @Column('text', { default: '' })
  name!: string;

  @Column('jsonb', { default: () => "'{}'::jsonb" })
  filters!: FeatureFlagFilters;

  /** Legacy column: filters of rows from before `groups` carried the rollout. */
  @Column('int', { name: 'rollout_percentage', nullable: true })
  rolloutPercentage!: number | null;

  @Column('boolean', { default: false })
  deleted!: boolean;

  @Column('boolean', { default: true })
  active!: boolean;

  @Column('boolean', { name: 'ensure_experience_continuity', default: false })
  ensureExperienceContinuity!: boolean;

  @Column('jsonb', { name: 'rollback_conditions', nullable: true })
  rollbackConditions!: unknown;

  @Column('boolean', { name: 'performed_rollback', nullable: true })
  performedRollback!: boolean | null;

  @Column('text', { array: true, default: () => "'{}'" })
  tags!: string[];

  @Column('int', { name: 'usage_dashboard_id', nullable: true })
  usageDashboardId!: number | null;

  @Column('int', { name: 'analytics_dashboards', array: true, default: () => "'{}'" })
  analyticsDashboards!: number[];

  @Column('boolean', { name: 'has_enriched_analytics', default: false })
  hasEnrichedAnalytics!: boolean;

  @Column('int', { default: 1 })
  version!: number;

  @Column('int', { name: 'created_by_id', nullable: true })
  createdById!: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'created_by_id' })
  createdBy?: User | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
