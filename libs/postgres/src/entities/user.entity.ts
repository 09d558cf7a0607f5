import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('users')
export class User {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column('uuid', { unique: true })
  uuid!: string;

  @Column('varchar', { name: 'distinct_id', length: 200, unique: true })
  distinctId!: string;

  @Column('varchar', { name: 'first_name', length: 150, default: '' })
  firstName!: string;

  @Column('varchar', { name: 'last_name', length: 150, default: '' })
  lastName!: string;

  @Column('varchar', { length: 254 })
  email!: string;

  @Column('boolean', { name: 'is_email_verified', default: false })
  isEmailVerified!: boolean;

  @Column('boolean', { name: 'is_active', default: true })
  isActive!: boolean;

  @Column('jsonb', { name: 'hedgehog_config', nullable: true })
  hedgehogConfig!: Record<string, unknown> | null;

  @Column('uuid', { name: 'current_organization_id', nullable: true })
  currentOrganizationId!: string | null;

  @Column('int', { name: 'current_team_id', nullable: true })
  currentTeamId!: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
