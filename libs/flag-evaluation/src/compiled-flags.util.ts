import type { FlagDefinition, FlagEvaluationResult, FlagReasonCode } from './flag-definition.types';
import { REASON_DESCRIPTIONS, type MatchReason } from './flag-result.util';

type Metadata = FlagEvaluationResult['metadata'];
type Reason = FlagEvaluationResult['reason'];

/**
 * A project's flags prepared once for many evaluations. NOTE: metadata and reasons are shared by every
 * answer, hence frozen, which also lets a serializer cache their JSON by identity.
 */
export class CompiledFlags {
  /** Every non-deleted flag, in the given order. */
  readonly live: readonly FlagDefinition[];
  readonly byId: ReadonlyMap<number, FlagDefinition>;
  private readonly dependencies = new Map<FlagDefinition, readonly number[]>();
  private readonly metadataByFlag = new Map<FlagDefinition, Map<string | null, Metadata>>();

  constructor(flags: readonly FlagDefinition[]) {
    this.live = flags.filter((flag) => !flag.deleted);
    this.byId = new Map(this.live.map((flag) => [flag.id, flag]));
    for (const flag of this.live) this.dependencies.set(flag, flagDependencyIds(flag));
  }

  dependencyIds(flag: FlagDefinition): readonly number[] {
    return this.dependencies.get(flag) ?? flagDependencyIds(flag);
  }

  /** `payloadKey` is a variant key, `"true"` for a boolean flag, or null for no payload. */
  metadata(flag: FlagDefinition, payloadKey: string | null): Metadata {
    let byKey = this.metadataByFlag.get(flag);
    if (byKey === undefined) {
      byKey = new Map();
      this.metadataByFlag.set(flag, byKey);
    }
    let metadata = byKey.get(payloadKey);
    if (metadata === undefined) {
      const stored = payloadKey === null ? undefined : ownValue(flag.filters.payloads, payloadKey);
      metadata = Object.freeze({
        id: flag.id,
        version: flag.version ?? 0,
        description: null,
        payload: stored === undefined ? null : stored,
        has_experiment: flag.has_experiment ?? false,
      });
      byKey.set(payloadKey, metadata);
    }
    return metadata;
  }
}

const reasons = new Map<MatchReason, Reason[]>();

export function sharedReason(reason: MatchReason, conditionIndex: number | null): Reason {
  // Slot 0 holds the null index; condition indexes are small (a flag's condition count).
  const slot = conditionIndex === null ? 0 : conditionIndex + 1;
  let byIndex = reasons.get(reason);
  if (byIndex === undefined) {
    byIndex = [];
    reasons.set(reason, byIndex);
  }
  let shared = byIndex[slot];
  if (shared === undefined) {
    const code: FlagReasonCode =
      reason === 'no_condition_match_groups_not_evaluated' ? 'no_condition_match' : reason;
    const description =
      reason === 'condition_match'
        ? `Matched condition set ${(conditionIndex ?? 0) + 1}`
        : REASON_DESCRIPTIONS[reason];
    shared = Object.freeze({ code, condition_index: conditionIndex, description });
    byIndex[slot] = shared;
  }
  return shared;
}

export function flagDependencyIds(flag: FlagDefinition): number[] {
  const ids: number[] = [];
  for (const condition of flag.filters.groups ?? []) {
    for (const filter of condition.properties ?? []) {
      if (filter.type !== 'flag') continue;
      const id = Number(filter.key);
      if (Number.isInteger(id)) ids.push(id);
    }
  }
  return ids;
}

/** A record's own entry: keys come from users, so `constructor` must not reach the prototype. */
export function ownValue<T>(
  record: Readonly<Record<string, T>> | null | undefined,
  key: string,
): T | undefined {
  return record && Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined;
}
