import { Injectable } from '@nestjs/common';
import { OptionalPathIdPipe, parseIntegerId, pathParam } from '../common/path-params.pipe';

export function parsePluginId(value: string | number): number | null {
  const id = parseIntegerId(String(value));
  return id !== null && id >= 1 ? id : null;
}

/** An app's or config's id from the path; null when it can name no row. */
export type PluginId = number | null;

/** Null rather than a 404: PostHog checks the plugins access level (a 403) before the lookup. */
@Injectable()
export class PluginIdPipe extends OptionalPathIdPipe<number> {
  protected parse(value: string): number | null {
    return parsePluginId(value);
  }
}

export const PluginIdParam = (name: string): ParameterDecorator => pathParam(name, PluginIdPipe);
