import { ApiProperty } from '@nestjs/swagger';
import { MEMBERSHIP_LEVELS } from '@hogbase/postgres';
import type { MembershipLevel, Team } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { ApiModel, DATE_TIME } from '../schema/api-responses.decorator';
import { WEB_VITALS_METRICS } from './project.dto';

/** PostHog's TeamBasicSerializer: what organizations embed in `teams` and the project list returns. */
@ApiModel('TeamBasic')
export class ProjectBasicResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ format: 'uuid' })
  uuid!: string;

  @ApiProperty({ format: 'uuid', description: 'The id of its organization' })
  organization!: string;

  @ApiProperty({ description: 'The project API key (phc_), which capture takes' })
  api_token!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty()
  completed_snippet_onboarding!: boolean;

  @ApiProperty()
  ingested_event!: boolean;

  @ApiProperty()
  is_demo!: boolean;

  @ApiProperty()
  timezone!: string;

  @ApiProperty()
  access_control!: boolean;
}

/** PostHog's project (TeamSerializer's fields this server has): what the project routes answer. */
@ApiModel('Project')
export class ProjectResponse extends ProjectBasicResponse {
  @ApiProperty(DATE_TIME)
  created_at!: string;

  @ApiProperty(DATE_TIME)
  updated_at!: string;

  @ApiProperty({ type: [String], description: 'The URLs of the sites it tracks' })
  app_urls!: string[];

  @ApiProperty()
  anonymize_ips!: boolean;

  @ApiProperty()
  inject_web_apps!: boolean;

  @ApiProperty()
  autocapture_opt_out!: boolean;

  @ApiProperty()
  autocapture_exceptions_opt_in!: boolean;

  @ApiProperty()
  autocapture_web_vitals_opt_in!: boolean;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...WEB_VITALS_METRICS] },
    nullable: true,
    description: 'The web vitals posthog-js reports, or null for all',
  })
  autocapture_web_vitals_allowed_metrics!: string[] | null;

  @ApiProperty()
  capture_performance_opt_in!: boolean;

  @ApiProperty()
  capture_console_log_opt_in!: boolean;

  @ApiProperty()
  capture_dead_clicks!: boolean;

  @ApiProperty()
  heatmaps_opt_in!: boolean;

  @ApiProperty({
    enum: [false],
    description: 'Always false: this server keeps no recordings, so posthog-js is never told to record',
  })
  session_recording_opt_in!: false;

  @ApiProperty({
    type: 'integer',
    enum: MEMBERSHIP_LEVELS,
    nullable: true,
    description: "The caller's level in its organization: 1 member, 8 admin, 15 owner",
  })
  effective_membership_level!: MembershipLevel | null;
}

export function presentProjectBasic(team: Team): ProjectBasicResponse {
  return {
    id: team.id,
    uuid: team.uuid,
    organization: team.organizationId,
    api_token: team.apiToken,
    name: team.name,
    completed_snippet_onboarding: team.completedSnippetOnboarding,
    ingested_event: team.ingestedEvent,
    is_demo: team.isDemo,
    timezone: team.timezone,
    access_control: false,
  };
}

export function presentProject(team: Team, level: MembershipLevel | null): ProjectResponse {
  return {
    ...presentProjectBasic(team),
    created_at: iso(team.createdAt),
    updated_at: iso(team.updatedAt),
    app_urls: team.appUrls,
    anonymize_ips: team.anonymizeIps,
    inject_web_apps: team.injectWebApps,
    autocapture_opt_out: team.autocaptureOptOut,
    autocapture_exceptions_opt_in: team.autocaptureExceptionsOptIn,
    autocapture_web_vitals_opt_in: team.autocaptureWebVitalsOptIn,
    autocapture_web_vitals_allowed_metrics: team.autocaptureWebVitalsAllowedMetrics,
    capture_performance_opt_in: team.capturePerformanceOptIn,
    capture_console_log_opt_in: team.captureConsoleLogOptIn,
    capture_dead_clicks: team.captureDeadClicks,
    heatmaps_opt_in: team.heatmapsOptIn,
    session_recording_opt_in: false,
    effective_membership_level: level,
  };
}
