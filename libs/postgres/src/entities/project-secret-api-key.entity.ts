import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { User } from './user.entity';

/** A project secret API key (`phs_…`): user-less, it reads one project's flag definitions, nothing else. */
@Entity('project_secret_api_keys')
export class ProjectSecretApiKey {
  @PrimaryColumn('varchar', { length: 50 })
  id!: string;

  @Column('int', { name: 'team_id' })
  teamId!: number;

  @Column('varchar', { length: 40 })
  label!: string;

  /** `sha256$<hex>` of the key; the key itself is never stored. */
  @Column('varchar', { name: 'secure_value', length: 300, unique: true })
  secureValue!: string;

  @Column('varchar', { name: 'mask_value', length: 11 })
  maskValue!: string;

  @Column('text', { array: true })
  scopes!: string[];

  @Column('int', { name: 'created_by_id', nullable: true })
  createdById!: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'created_by_id' })
  createdBy?: User | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'last_used_at', nullable: true })
  lastUsedAt!: Date | null;

  @Column('timestamptz', { name: 'last_rolled_at', nullable: true })
  lastRolledAt!: Date | null;
}
