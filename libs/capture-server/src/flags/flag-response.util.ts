import { randomUUID } from 'node:crypto';
import { flagValue, type FlagEvaluationResult } from '@hogbase/flag-evaluation';
import type { JsonText } from '../openapi/documented-route.util';
import type { FlagsLegacy, FlagsV2 } from './flags.dto';

/** The SDKs parse a payload from a JSON string, whatever was stored. */
function payloadText(payload: unknown): string | undefined {
  if (payload === undefined || payload === null) return undefined;
  return typeof payload === 'string' ? payload : JSON.stringify(payload);
}

/** `/flags?v=2` and `/decide?v=4`. */
export function v2Body(results: Record<string, FlagEvaluationResult>, errors: boolean): FlagsV2 {
  return {
    flags: Object.fromEntries(
      Object.entries(results).map(([key, result]) => [
        key,
        {
          key,
          enabled: result.enabled,
          variant: result.variant,
          reason: result.reason,
          metadata: { ...result.metadata, payload: payloadText(result.metadata.payload) },
          ...(result.failed ? { failed: true } : {}),
        },
      ]),
    ),
    errorsWhileComputingFlags: errors || Object.values(results).some((result) => result.failed),
    requestId: randomUUID(),
    evaluatedAt: Date.now(),
  };
}

/** `/flags` before v2 and `/decide` before v4. */
export function legacyBody(results: Record<string, FlagEvaluationResult>, errors: boolean): FlagsLegacy {
  const featureFlags: Record<string, string | boolean> = {};
  const featureFlagPayloads: Record<string, string> = {};
  for (const [key, result] of Object.entries(results)) {
    featureFlags[key] = flagValue(result);
    const payload = result.enabled ? payloadText(result.metadata.payload) : undefined;
    if (payload !== undefined) featureFlagPayloads[key] = payload;
  }
  return {
    featureFlags,
    featureFlagPayloads,
    errorsWhileComputingFlags: errors || Object.values(results).some((result) => result.failed),
  };
}

/** JSON of CompiledFlags' shared, frozen metadata and reasons, once per definitions read. */
const sharedJson = new WeakMap<object, string>();

function jsonOnce(value: object, make: () => string): string {
  if (!Object.isFrozen(value)) return make();
  let json = sharedJson.get(value);
  if (json === undefined) {
    json = make();
    sharedJson.set(value, json);
  }
  return json;
}

/**
 * `JSON.stringify(v2Body(results, errors))`, from pieces: an answer's metadata and reason are the
 * same objects from one call to the next (CompiledFlags shares them), so their JSON is made once.
 */
export function v2Json(results: Record<string, FlagEvaluationResult>, errors: boolean): JsonText<FlagsV2> {
  let flags = '';
  let failed = false;
  for (const key of Object.keys(results)) {
    const result = results[key];
    if (result.failed) failed = true;
    const keyJson = JSON.stringify(key);
    const variant = result.variant === null ? 'null' : JSON.stringify(result.variant);
    const reason = jsonOnce(result.reason, () => JSON.stringify(result.reason));
    const metadata = jsonOnce(result.metadata, () =>
      JSON.stringify({ ...result.metadata, payload: payloadText(result.metadata.payload) }),
    );
    flags +=
      `${flags === '' ? '' : ','}${keyJson}:{"key":${keyJson},"enabled":${result.enabled},` +
      `"variant":${variant},"reason":${reason},"metadata":${metadata}${result.failed ? ',"failed":true' : ''}}`;
  }
  return (`{"flags":{${flags}},"errorsWhileComputingFlags":${errors || failed},` +
    `"requestId":"${randomUUID()}","evaluatedAt":${Date.now()}}`) as JsonText<FlagsV2>;
}
