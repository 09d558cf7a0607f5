import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A dashboard; so far only flags' generated usage dashboards, whose tiles describe their insights. */
@Entity('dashboards')
export class Dashboard {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column('int', { name: 'team_id' })
  teamId!: number;

  @Column('varchar', { length: 400 })
  name!: string;

  @Column('text', { default: '' })
  description!: string;

  @Column('jsonb', { default: () => "'[]'::jsonb" })
  tiles!: Record<string, unknown>[];

  @Column('boolean', { name: 'has_enriched_analytics', default: false })
  hasEnrichedAnalytics!: boolean;

  @Column('boolean', { default: false })
  deleted!: boolean;

  @Column('int', { name: 'created_by_id', nullable: true })
  createdById!: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
