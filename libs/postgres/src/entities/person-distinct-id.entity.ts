import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Person } from './person.entity';

/** One distinct id of a person; unique per project. */
@Entity('person_distinct_ids')
export class PersonDistinctId {
  @PrimaryColumn('int', { name: 'team_id' })
  teamId!: number;

  @PrimaryColumn('varchar', { name: 'distinct_id', length: 400 })
  distinctId!: string;

  @Column('bigint', { name: 'person_id' })
  personId!: string;

  @ManyToOne(() => Person, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'person_id' })
  person?: Person;

  /** Bumped each time the id moves to another person (merges). */
  @Column('bigint', { default: 0 })
  version!: string;

  /** When the row last changed: set by a trigger on every write (persons batch exports select by it). */
  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}
