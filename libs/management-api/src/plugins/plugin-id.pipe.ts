import { Injectable } from '@nestjs/common';
import { OptionalPathIdPipe, parseIntegerId, pathParam } from '../common/path-params.pipe';

/** An app's or config's id: an integer id from 1, or null when the text can name no row. */
export function parsePluginId(value: string | number): number | null {
  const id = parseIntegerId(String(value));
  return id !== null && id >= 1 ? id : null;
}

/** An app's or config's id from the path; null when it can name no row. */
export type PluginId = number | null;

/**
 * Null rather than IntegerIdPipe's 404: the organization's plugins access level is checked first
 * (PostHog's PluginsAccessLevelPermission runs before the lookup), so a malformed id must still
 * get that 403. The service answers the 404 after its check.
 */
@Injectable()
export class PluginIdPipe extends OptionalPathIdPipe<number> {
  protected parse(value: string): number | null {
    return parsePluginId(value);
  }
}

/** `@PluginIdParam('id') id: PluginId`. */
export const PluginIdParam = (name: string): ParameterDecorator => pathParam(name, PluginIdPipe);
