/**
 * The catalog `repository/` serves when APPS_REPOSITORY_URL is unset: PostHog's plugins.json shape
 * (name, url, description, icon, verified, maintainer), listing apps this server can install.
 */
export const BUNDLED_APPS_REPOSITORY: readonly Record<string, unknown>[] = [
  {
    name: 'GeoIP',
    url: 'https://www.npmjs.com/package/@posthog/geoip-plugin',
    description: 'Enrich PostHog events and persons with IP location data',
    icon: 'https://raw.githubusercontent.com/PostHog/posthog-plugin-geoip/main/logo.png',
    verified: true,
    maintainer: 'official',
    type: 'transformation',
  },
  {
    name: 'Property Filter',
    url: 'https://github.com/PostHog/posthog-plugin-property-filter',
    description: 'Set event properties to null',
    verified: true,
    maintainer: 'community',
    type: 'transformation',
  },
  {
    name: 'Pineapple Mode',
    url: 'https://github.com/PostHog/pineapple-mode-app',
    description: 'Make it rain pineapples',
    verified: true,
    maintainer: 'official',
    type: 'site_app',
  },
  {
    name: 'Notification Bar',
    url: 'https://github.com/PostHog/notification-bar-app',
    description: 'Show a notification bar for your users',
    verified: true,
    maintainer: 'official',
    type: 'site_app',
  },
];
