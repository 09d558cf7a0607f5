// Download, read, build and inspect an app: what the management API stores for it.
export { downloadApp } from './app-download.util';
export { latestVersion } from './app-version.util';
export { prepareApp } from './app-prepare.util';
export { AppInstallError } from './app-install.error';
export type { AppFiles, AppSourceOptions, BuiltFile } from './app-install.types';
