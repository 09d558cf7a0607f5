import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** PostHog's "team". */
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

  /** Turns posthog-js's autocapture off (remote config `autocapture_opt_out`). */
  @Column('boolean', { name: 'autocapture_opt_out', default: false })
  autocaptureOptOut!: boolean;

  /** Lets posthog-js capture uncaught exceptions as `$exception` (remote config `autocaptureExceptions`). */
  @Column('boolean', { name: 'autocapture_exceptions_opt_in', default: false })
  autocaptureExceptionsOptIn!: boolean;

  /** Lets posthog-js send `$web_vitals` events (remote config `capturePerformance.web_vitals`). */
  @Column('boolean', { name: 'autocapture_web_vitals_opt_in', default: false })
  autocaptureWebVitalsOptIn!: boolean;

  /** Which web vitals posthog-js sends (`FCP`, `LCP`, `INP`, `CLS`); null: the SDK's default. */
  @Column('text', { name: 'autocapture_web_vitals_allowed_metrics', array: true, nullable: true })
  autocaptureWebVitalsAllowedMetrics!: string[] | null;

  /** Network timing (remote config `capturePerformance.network_timing`): recorded into replays only. */
  @Column('boolean', { name: 'capture_performance_opt_in', default: true })
  capturePerformanceOptIn!: boolean;

  /** Console logs in replays: kept for PostHog's settings, inert while this server keeps no recordings. */
  @Column('boolean', { name: 'capture_console_log_opt_in', default: true })
  captureConsoleLogOptIn!: boolean;

  /** Lets posthog-js send `$dead_click` events (remote config `captureDeadClicks`). */
  @Column('boolean', { name: 'capture_dead_clicks', default: false })
  captureDeadClicks!: boolean;

  /** Lets posthog-js attach heatmap data to its events (remote config `heatmaps`). */
  @Column('boolean', { name: 'heatmaps_opt_in', default: false })
  heatmapsOptIn!: boolean;

  @Column('text', { name: 'app_urls', array: true, default: () => "'{}'" })
  appUrls!: string[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
