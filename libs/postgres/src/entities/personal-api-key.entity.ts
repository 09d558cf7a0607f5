import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { User } from './user.entity';

@Entity('personal_api_keys')
export class PersonalApiKey {
  @PrimaryColumn('varchar', { length: 50 })
  id!: string;

  @Column('int', { name: 'user_id' })
  userId!: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user?: User;

  @Column('varchar', { length: 40 })
  label!: string;

  /** `sha256$<hex>` of the key; the key itself is never stored. */
  @Column('varchar', { name: 'secure_value', length: 300, unique: true })
  secureValue!: string;

  @Column('varchar', { name: 'mask_value', length: 11 })
  maskValue!: string;

  /** null or empty means every scope, as PostHog's legacy keys. */
  @Column('text', { array: true, nullable: true })
  scopes!: string[] | null;

  @Column('int', { name: 'scoped_teams', array: true, nullable: true })
  scopedTeams!: number[] | null;

  @Column('text', { name: 'scoped_organizations', array: true, nullable: true })
  scopedOrganizations!: string[] | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'last_used_at', nullable: true })
  lastUsedAt!: Date | null;

  @Column('timestamptz', { name: 'last_rolled_at', nullable: true })
  lastRolledAt!: Date | null;
}
