import { Injectable, Param, type PipeTransform } from '@nestjs/common';

/** An integer id in Postgres's range, or null: anything else is an id that cannot exist. */
export function parsePluginId(value: string | number): number | null {
  const text = String(value);
  if (!/^\d{1,10}$/.test(text)) return null;
  const id = Number(text);
  return id >= 1 && id <= 2_147_483_647 ? id : null;
}

/** An app's or config's id from the path; null when it can name no row. */
export type PluginId = number | null;

/**
 * Not the 404 of IntegerIdPipe: the organization's plugins access level is checked first (PostHog's
 * PluginsAccessLevelPermission runs before the lookup), so a malformed id must still get that 403.
 * The service answers the 404 after its check.
 */
@Injectable()
export class PluginIdPipe implements PipeTransform<string, PluginId> {
  transform(value: string): PluginId {
    return parsePluginId(value);
  }
}

/** `@PluginIdParam('id') id: PluginId`. */
export const PluginIdParam = (name: string): ParameterDecorator => Param(name, PluginIdPipe);
