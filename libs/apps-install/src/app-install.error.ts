/** Shown to the API user as is, so it never carries a URL's query string. */
export class AppInstallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AppInstallError';
  }
}
