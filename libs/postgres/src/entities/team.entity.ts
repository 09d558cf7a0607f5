import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A project (PostHog's "team"): the unit events, persons and flags belong to. */
@Entity('teams')
export class Team {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column('uuid', { unique: true })
  uuid!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('varchar', { length: 200 })
  name!: string;

  /** The project API key (`phc_…`) that capture accepts. */
  @Column('varchar', { name: 'api_token', length: 200, unique: true })
  apiToken!: string;

  @Column('varchar', { length: 240, default: 'UTC' })
  timezone!: string;

  @Column('boolean', { name: 'is_demo', default: false })
  isDemo!: boolean;

  @Column('boolean', { name: 'anonymize_ips', default: false })
  anonymizeIps!: boolean;

  @Column('boolean', { name: 'completed_snippet_onboarding', default: false })
  completedSnippetOnboarding!: boolean;

  @Column('boolean', { name: 'ingested_event', default: false })
  ingestedEvent!: boolean;

  /** Lets posthog-js load the project's enabled site apps (listed in its remote config). */
  @Column('boolean', { name: 'inject_web_apps', default: false })
  injectWebApps!: boolean;

  @Column('text', { name: 'app_urls', array: true, default: () => "'{}'" })
  appUrls!: string[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
