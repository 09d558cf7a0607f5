import type { MembershipLevel, Team } from '@hogbase/postgres';
import { iso } from '../common/iso.util';

/** PostHog's TeamBasicSerializer: what organizations embed in `teams` and the project list returns. */
export interface ProjectBasicResponse {
  id: number;
  uuid: string;
  organization: string;
  api_token: string;
  name: string;
  completed_snippet_onboarding: boolean;
  ingested_event: boolean;
  is_demo: boolean;
  timezone: string;
  access_control: boolean;
}

export interface ProjectResponse extends ProjectBasicResponse {
  created_at: string;
  updated_at: string;
  app_urls: string[];
  anonymize_ips: boolean;
  inject_web_apps: boolean;
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
    effective_membership_level: level,
  };
}
