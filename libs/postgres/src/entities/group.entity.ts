import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A group (company, organization, ...) created or updated by `$groupidentify`. */
@Entity('groups')
export class Group {
  @PrimaryGeneratedColumn('increment', { type: 'bigint' })
  id!: string;

  @Column('int', { name: 'team_id' })
  teamId!: number;

  @Column('smallint', { name: 'group_type_index' })
  groupTypeIndex!: number;

  @Column('varchar', { name: 'group_key', length: 400 })
  groupKey!: string;

  @Column('jsonb', { name: 'group_properties', default: () => "'{}'::jsonb" })
  groupProperties!: Record<string, unknown>;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('bigint', { default: 0 })
  version!: string;
}
