import { Inject, Injectable } from '@nestjs/common';
import type { ManagementConfig } from '@hogbase/config';
import { ApiError } from '../common/api.error';
import { MANAGEMENT_CONFIG } from '../management-config.constants';
import { BUNDLED_APPS_REPOSITORY } from './plugin-catalog.constants';

const FETCH_TIMEOUT_MS = 10_000;
const MAX_CATALOG_BYTES = 5 * 1024 * 1024;

/** The apps catalog (`repository/`): APPS_REPOSITORY_URL's JSON list, or the bundled one. */
@Injectable()
export class PluginCatalogService {
  constructor(@Inject(MANAGEMENT_CONFIG) private readonly config: ManagementConfig) {}

  async list(): Promise<unknown[]> {
    const url = this.config.apps.repositoryUrl;
    if (!url) return [...BUNDLED_APPS_REPOSITORY];
    // A remote that fails is ours to report (503), not the caller's mistake and not a crash.
    const unavailable = (why: string) =>
      new ApiError('service_unavailable', `The apps repository could not be read: ${why}.`);
    let response: Response;
    try {
      response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'follow' });
    } catch (error) {
      throw unavailable(
        error instanceof Error && error.name === 'TimeoutError' ? 'timed out' : 'unreachable',
      );
    }
    if (!response.ok) throw unavailable(`it answered ${response.status}`);
    const body = await response.text();
    if (body.length > MAX_CATALOG_BYTES) throw unavailable('it is too large');
    let catalog: unknown;
    try {
      catalog = JSON.parse(body);
    } catch {
      throw unavailable('it is not JSON');
    }
    if (!Array.isArray(catalog)) throw unavailable('it is not a JSON list');
    return catalog as unknown[];
  }

  /** Whether `url` (without its query string) is an app of the catalog. */
  async lists(url: string): Promise<boolean> {
    const catalog = await this.list();
    return catalog.some(
      (entry) =>
        typeof entry === 'object' &&
        entry !== null &&
        typeof (entry as { url?: unknown }).url === 'string' &&
        (entry as { url: string }).url.replace(/\/+$/, '') === url.replace(/\/+$/, ''),
    );
  }
}
