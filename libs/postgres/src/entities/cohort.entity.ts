import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { User } from './user.entity';

/** Dynamic (`filters` say who belongs) or static (members in `cohort_people`). */
@Entity('cohorts')
export class Cohort {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column('int', { name: 'team_id' })
  teamId!: number;

  @Column('varchar', { length: 400, default: '' })
  name!: string;

  @Column('varchar', { length: 1000, default: '' })
  description!: string;

  /** `{properties: {type: 'AND'|'OR', values: [...]}}`, PostHog's cohort filters. */
  @Column('jsonb', { default: () => "'{}'::jsonb" })
  filters!: Record<string, unknown>;

  @Column('boolean', { name: 'is_static', default: false })
  isStatic!: boolean;

  @Column('boolean', { name: 'is_calculating', default: false })
  isCalculating!: boolean;

  @Column('boolean', { default: false })
  deleted!: boolean;

  @Column('int', { nullable: true })
  count!: number | null;

  @Column('timestamptz', { name: 'last_calculation', nullable: true })
  lastCalculation!: Date | null;

  @Column('int', { nullable: true })
  version!: number | null;

  @Column('int', { name: 'created_by_id', nullable: true })
  createdById!: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'created_by_id' })
  createdBy?: User | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
