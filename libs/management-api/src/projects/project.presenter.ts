import { ApiProperty } from '@nestjs/swagger';
import type { MembershipLevel, Team } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { ApiModel } from '../schema/api-responses.decorator';

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

export interface ProjectResponse extends ProjectBasicResponse {
  created_at: string;
  updated_at: string;
  app_urls: string[];
  anonymize_ips: boolean;
  inject_web_apps: boolean;
  autocapture_opt_out: boolean;
  autocapture_exceptions_opt_in: boolean;
  autocapture_web_vitals_opt_in: boolean;
  autocapture_web_vitals_allowed_metrics: string[] | null;
  capture_performance_opt_in: boolean;
  capture_console_log_opt_in: boolean;
  capture_dead_clicks: boolean;
  heatmaps_opt_in: boolean;
  /** Always false: this server keeps no recordings, so posthog-js is never told to record. */
  session_recording_opt_in: false;
  effective_membership_level: MembershipLevel | null;
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
