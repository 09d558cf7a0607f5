import { Column, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { Team } from './team.entity';

/** How a person property got its current value (PostHog's `properties_last_operation`). */
export type PersonPropertyOperation = 'set' | 'set_once';

/** Written only by ingestion, with raw SQL; bigint columns come back as strings. */
@Entity('persons')
export class Person {
  @PrimaryGeneratedColumn('increment', { type: 'bigint' })
  id!: string;

  /** UUIDv5 of `<team_id>:<first distinct id>`: the `person_id` of the person's events. */
  @Column('uuid')
  uuid!: string;

  @Column('int', { name: 'team_id' })
  teamId!: number;

  @ManyToOne(() => Team, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id' })
  team?: Team;

  @Column('jsonb', { default: () => "'{}'::jsonb" })
  properties!: Record<string, unknown>;

  /** Property key -> ISO timestamp of the event that last changed it. */
  @Column('jsonb', { name: 'properties_last_updated_at', default: () => "'{}'::jsonb" })
  propertiesLastUpdatedAt!: Record<string, string>;

  @Column('jsonb', { name: 'properties_last_operation', default: () => "'{}'::jsonb" })
  propertiesLastOperation!: Record<string, PersonPropertyOperation>;

  @Column('boolean', { name: 'is_identified', default: false })
  isIdentified!: boolean;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  /** Bumped on every write; ClickHouse copies keep the highest. */
  @Column('bigint', { default: 0 })
  version!: string;

  /** When the row last changed: set by a trigger on every write (persons batch exports select by it). */
  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}
