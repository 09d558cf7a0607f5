import type { SiteAppLink } from '../site-apps/site-app-script.util';
import type { FlagsConfigFields, RemoteConfig } from './remote-config.dto';

export interface ProjectSdkSettings {
  token: string;
  autocaptureOptOut: boolean;
  autocaptureExceptionsOptIn: boolean;
  autocaptureWebVitalsOptIn: boolean;
  autocaptureWebVitalsAllowedMetrics: string[] | null;
  capturePerformanceOptIn: boolean;
  captureDeadClicks: boolean;
  heatmapsOptIn: boolean;
  /** Whether the project has an active flag: posthog-js skips its `/flags` call when false. */
  hasFeatureFlags: boolean;
}

/** A new project's settings: the migration's column defaults, as PostHog's. */
export const DEFAULT_SDK_SETTINGS: Omit<ProjectSdkSettings, 'token' | 'hasFeatureFlags'> = {
  autocaptureOptOut: false,
  autocaptureExceptionsOptIn: false,
  autocaptureWebVitalsOptIn: false,
  autocaptureWebVitalsAllowedMetrics: null,
  capturePerformanceOptIn: true,
  captureDeadClicks: false,
  heatmapsOptIn: false,
};

/** Where posthog-js sends events once it read the remote config; `/e/` is served too. */
const ANALYTICS_ENDPOINT = '/i/v0/e/';

/**
 * `GET /array/:token/config`, as posthog/models/remote_config.py `build_config`. What this server
 * does not offer is off: no session recording, no surveys, no suppression rules.
 */
export function buildRemoteConfig(
  settings: ProjectSdkSettings,
  siteApps: readonly SiteAppLink[],
): RemoteConfig {
  const capturePerformance =
    settings.capturePerformanceOptIn || settings.autocaptureWebVitalsOptIn
      ? {
          network_timing: settings.capturePerformanceOptIn,
          web_vitals: settings.autocaptureWebVitalsOptIn,
          web_vitals_allowed_metrics: settings.autocaptureWebVitalsAllowedMetrics,
        }
      : false;
  return {
    token: settings.token,
    supportedCompression: ['gzip', 'gzip-js'],
    hasFeatureFlags: settings.hasFeatureFlags,
    captureDeadClicks: settings.captureDeadClicks,
    capturePerformance,
    autocapture_opt_out: settings.autocaptureOptOut,
    autocaptureExceptions: settings.autocaptureExceptionsOptIn,
    analytics: { endpoint: ANALYTICS_ENDPOINT },
    elementsChainAsString: true,
    errorTracking: { autocaptureExceptions: settings.autocaptureExceptionsOptIn, suppressionRules: [] },
    sessionRecording: false,
    heatmaps: settings.heatmapsOptIn,
    surveys: false,
    defaultIdentifiedOnly: true,
    siteApps: [...siteApps],
  };
}

/**
 * As `/flags?config=true` and `/decide` carry it (`FlagsPlusConfigResponse`,
 * rust/feature-flags/src/api/types.rs), plus the fields older posthog-js versions read.
 */
export function flagsConfigFields(remoteConfig: RemoteConfig): FlagsConfigFields {
  const { token: _token, hasFeatureFlags: _hasFeatureFlags, ...fields } = remoteConfig;
  return {
    ...fields,
    config: { enable_collect_everything: true },
    toolbarParams: {},
    isAuthenticated: false,
  };
}

/** What holds for every project, when one's cannot be read; posthog-js keeps its last value of the rest. */
export const STATIC_FLAGS_CONFIG_FIELDS: Readonly<FlagsConfigFields> = {
  supportedCompression: ['gzip', 'gzip-js'],
  sessionRecording: false,
  surveys: false,
  config: { enable_collect_everything: true },
  toolbarParams: {},
  isAuthenticated: false,
};
