import { Type, type Static } from '@sinclair/typebox';

export const SiteAppLinkSchema = Type.Object(
  {
    id: Type.Integer({ description: "The site app's plugin config id." }),
    url: Type.String({
      description: 'Where posthog-js loads its script (`/site_app/…`), relative to the host.',
    }),
    type: Type.Literal('site_app'),
  },
  { $id: 'SiteAppLink', description: 'A site app of the project.' },
);

const settings = {
  supportedCompression: Type.Array(Type.String(), { description: 'What the SDK may compress with.' }),
  captureDeadClicks: Type.Boolean(),
  capturePerformance: Type.Union([
    Type.Literal(false),
    Type.Object({
      network_timing: Type.Boolean(),
      web_vitals: Type.Boolean(),
      web_vitals_allowed_metrics: Type.Union([Type.Array(Type.String()), Type.Null()]),
    }),
  ]),
  autocapture_opt_out: Type.Boolean(),
  autocaptureExceptions: Type.Boolean(),
  analytics: Type.Object({ endpoint: Type.String({ description: 'Where the SDK sends events.' }) }),
  elementsChainAsString: Type.Boolean(),
  errorTracking: Type.Object({
    autocaptureExceptions: Type.Boolean(),
    suppressionRules: Type.Array(Type.Unknown()),
  }),
  sessionRecording: Type.Boolean({ description: 'Always false: no recordings are kept.' }),
  heatmaps: Type.Boolean(),
  surveys: Type.Boolean({ description: 'Always false: no surveys.' }),
  defaultIdentifiedOnly: Type.Boolean(),
  siteApps: Type.Array(Type.Unsafe<Static<typeof SiteAppLinkSchema>>(Type.Ref('SiteAppLink'))),
};

export const RemoteConfigSchema = Type.Object(
  {
    token: Type.String({ description: "The project's API key." }),
    hasFeatureFlags: Type.Boolean({ description: 'Whether the project has an active flag.' }),
    ...settings,
  },
  {
    $id: 'RemoteConfig',
    description: "A project's remote config, as PostHog's `build_config` makes it.",
  },
);

export type RemoteConfig = Static<typeof RemoteConfigSchema>;

/** Each may be absent: when the project's settings cannot be read, only those true of every project are sent. */
export const FlagsConfigFieldsSchema = Type.Partial(
  Type.Object({
    ...settings,
    config: Type.Object({ enable_collect_everything: Type.Boolean() }),
    toolbarParams: Type.Object({}),
    isAuthenticated: Type.Boolean(),
  }),
);

export type FlagsConfigFields = Static<typeof FlagsConfigFieldsSchema>;
