import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * PostHog's plugins_access_level values. New organizations get INSTALL (see
 * OrganizationProvisioningService); ROOT, which makes apps global, only from the admin CLI.
 */
export enum PluginsAccessLevel {
  None = 0,
  Config = 3,
  Install = 6,
  Root = 9,
}

@Entity('organizations')
export class Organization {
  @PrimaryColumn('uuid')
  id!: string;

  @Column('varchar', { length: 64 })
  name!: string;

  @Column('varchar', { length: 48, unique: true })
  slug!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;

  @Column('smallint', { name: 'plugins_access_level', default: PluginsAccessLevel.Install })
  pluginsAccessLevel!: number;

  @Column('boolean', { name: 'is_member_join_email_enabled', default: true })
  isMemberJoinEmailEnabled!: boolean;

  @Column('boolean', { name: 'enforce_2fa', nullable: true })
  enforce2fa!: boolean | null;

  @Column('varchar', { name: 'customer_id', length: 200, nullable: true })
  customerId!: string | null;

  @Column('jsonb', { name: 'available_product_features', default: () => "'[]'::jsonb" })
  availableProductFeatures!: unknown[];
}
