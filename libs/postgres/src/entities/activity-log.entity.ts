import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { User } from './user.entity';

/** One change to an item (a flag, ...), PostHog's ActivityLog: who, what, and the fields before/after. */
@Entity('activity_log')
export class ActivityLog {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('uuid', { name: 'organization_id', nullable: true })
  organizationId!: string | null;

  @Column('int', { name: 'team_id', nullable: true })
  teamId!: number | null;

  @Column('int', { name: 'user_id', nullable: true })
  userId!: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'user_id' })
  user?: User | null;

  @Column('boolean', { name: 'is_system', default: false })
  isSystem!: boolean;

  /** The kind of item: `FeatureFlag`, ... */
  @Column('varchar', { length: 79 })
  scope!: string;

  @Column('varchar', { name: 'item_id', length: 72, nullable: true })
  itemId!: string | null;

  /** `created`, `updated`, `deleted`, ... */
  @Column('varchar', { length: 79 })
  activity!: string;

  /** `{id, name, short_id, type, changes: [{type, action, field, before, after}], trigger}`. */
  @Column('jsonb', { default: () => "'{}'::jsonb" })
  detail!: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
