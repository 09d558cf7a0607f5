import type { EvaluationSubject } from '@hogbase/flag-store';
import { FlagRequestError } from '../capture.errors';

/** A `/flags` or `/decide` body, with the aliases PostHog's flags service accepts. */
export interface FlagRequest extends EvaluationSubject {
  token: string;
  /** `flag_keys_to_evaluate`. */
  flagKeys?: string[];
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const first = (body: Record<string, unknown>, ...names: string[]): unknown =>
  names.map((name) => body[name]).find((value) => value !== undefined && value !== null);

function idText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

function groupsOf(value: unknown): Record<string, string | number> {
  if (!isRecord(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter(
      (entry): entry is [string, string | number] =>
        typeof entry[1] === 'string' || typeof entry[1] === 'number',
    ),
  );
}

function groupPropertiesOf(value: unknown): Record<string, Record<string, unknown>> {
  if (!isRecord(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, Record<string, unknown>] => isRecord(entry[1])),
  );
}

export function parseFlagRequest(payload: unknown): FlagRequest {
  if (!isRecord(payload))
    throw new FlagRequestError(400, 'invalid_payload', 'The request body must be a JSON object.');
  const token = first(payload, 'token', '$token', 'api_key');
  if (typeof token !== 'string' || token === '') {
    throw new FlagRequestError(
      401,
      'invalid_api_key',
      'API key not valid. You can find your project API key in your project settings.',
    );
  }
  const distinctId = idText(first(payload, 'distinct_id', '$distinct_id'));
  if (distinctId === undefined || distinctId === '') {
    throw new FlagRequestError(
      400,
      'missing_distinct_id',
      'The distinct_id field is missing from the request.',
    );
  }
  const personProperties = first(payload, 'person_properties', '$properties');
  const flagKeys = first(payload, 'flag_keys_to_evaluate', 'flag_keys');
  return {
    token,
    distinctId,
    groups: groupsOf(payload.groups),
    personProperties: isRecord(personProperties) ? personProperties : undefined,
    groupProperties: groupPropertiesOf(payload.group_properties),
    anonDistinctId: idText(payload.$anon_distinct_id) ?? null,
    deviceId: idText(payload.$device_id) ?? null,
    flagKeys: Array.isArray(flagKeys)
      ? flagKeys.filter((key): key is string => typeof key === 'string')
      : undefined,
  };
}
