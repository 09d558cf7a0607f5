/**
 * A failure the API user can act on (bad URL, unreachable host, malformed plugin.json, app that does
 * not load). The message is meant to be shown as is, so it never carries a URL's query string.
 */
export class AppInstallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AppInstallError';
  }
}
