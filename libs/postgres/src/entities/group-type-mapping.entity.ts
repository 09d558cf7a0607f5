import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A project's group type and its `$group_N` index: at most five, numbered 0..4 in order of first use. */
@Entity('group_type_mappings')
export class GroupTypeMapping {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column('int', { name: 'team_id' })
  teamId!: number;

  @Column('varchar', { name: 'group_type', length: 400 })
  groupType!: string;

  @Column('smallint', { name: 'group_type_index' })
  groupTypeIndex!: number;
}
