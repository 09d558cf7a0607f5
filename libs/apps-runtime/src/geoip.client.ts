import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { Reader } from 'mmdb-lib';
import type { SandboxJson } from '@hogbase/apps-sandbox';

/** A MaxMind City database (GEOIP_DATABASE_PATH) read with mmdb-lib. */
export interface GeoIp {
  /** As @maxmind/geoip2-node's City model has it (camelCase), or null. */
  locate(ip: string): Promise<SandboxJson>;
}

/** mmdb keys are snake_case; PostHog handed apps geoip2-node's camelCase model. `names` stay as they are. */
function camelCased(value: unknown): SandboxJson {
  if (Array.isArray(value)) return value.map(camelCased);
  if (value === null || typeof value !== 'object') return value as SandboxJson;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase()),
      key === 'names' ? (inner as SandboxJson) : camelCased(inner),
    ]),
  );
}

/** Read on first lookup. */
export function openGeoIp(databasePath: string): GeoIp {
  let reader: Promise<Reader<Record<string, unknown>>> | undefined;
  return {
    async locate(ip) {
      reader ??= readFile(databasePath).then((buffer) => new Reader<Record<string, unknown>>(buffer));
      const opened = await reader.catch((error: unknown) => {
        reader = undefined;
        throw new Error(`the GeoIP database ${databasePath} cannot be read: ${(error as Error).message}`);
      });
      if (isIP(ip) === 0) return null;
      const record = opened.get(ip);
      return record ? camelCased(record) : null;
    },
  };
}
