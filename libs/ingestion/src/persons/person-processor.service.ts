import type { CapturedEvent } from '@hogbase/event-contract';
import type { Pool, PoolClient } from 'pg';
import { isParsedEvent, ParsedEvent, parseCapturedEvent } from '../events/parse-captured-event.util';
import { resolveGroupTypes, upsertGroups } from '../groups/group.repository';
import { collectGroupTypes } from '../groups/group-types.util';
import { GroupWrites } from '../groups/group-writes.state';
import { isConcurrencyConflict, isDataRejection } from '../shared/postgres-errors.util';
import { PersonBatchState } from './person-batch.state';
import { distinctIdsToLoad, PersonEventApplier } from './person-event-applier.util';
import type { EventOutcome, RejectedEvent } from './person-processing.types';
import {
  DistinctIdConflictError,
  lockDistinctIds,
  lockTeams,
  loadPersons,
  PersonUuidTakenError,
  writePersons,
} from './person.repository';
import { inPoolTransaction } from './pool-transaction.util';

export interface PersonProcessorOptions {
  /** Runs of one batch when transactions collide (deadlock, concurrent creation). */
  maxAttempts?: number;
  /** How long a statement waits for another process's locks before the batch fails. */
  lockTimeoutMs?: number;
}

interface PositionedEvent {
  position: number;
  event: ParsedEvent;
}

type PositionedOutcome = [position: number, outcome: EventOutcome];

const rejectionFor = (
  event: ParsedEvent,
  outcome: RejectedEvent['outcome'],
  reason: RejectedEvent['reason'],
  error: unknown,
): RejectedEvent => ({
  outcome,
  uuid: event.uuid,
  teamId: event.teamId,
  reason,
  detail: error instanceof Error ? error.message : String(error),
});

/**
 * One transaction per batch, across its projects: a redelivered batch is redone whole anyway, and
 * it is fewer round trips. One outcome per event, in input order; a bad event is a rejected outcome,
 * and a throw is transient (nothing committed, the caller retries).
 */
export class PersonProcessor {
  private readonly maxAttempts: number;
  private readonly lockTimeoutMs: number;

  constructor(
    private readonly pool: Pool,
    options: PersonProcessorOptions = {},
  ) {
    this.maxAttempts = Math.max(1, Math.floor(options.maxAttempts ?? 5));
    this.lockTimeoutMs = Math.max(1, Math.floor(options.lockTimeoutMs ?? 10_000));
  }

  processBatch(events: readonly CapturedEvent[]): Promise<EventOutcome[]> {
    return this.processParsed(events.map((event) => parseCapturedEvent(event)));
  }

  /** For events already through parseCapturedEvent (the handler decodes ahead). */
  async processParsed(events: readonly (ParsedEvent | RejectedEvent)[]): Promise<EventOutcome[]> {
    const outcomes = new Array<EventOutcome | undefined>(events.length);
    const parsed: PositionedEvent[] = [];
    events.forEach((result, position) => {
      if (isParsedEvent(result)) parsed.push({ position, event: result });
      else outcomes[position] = result;
    });

    if (parsed.length > 0) {
      let results: PositionedOutcome[];
      try {
        results = await this.runWithRetries(parsed);
      } catch (error) {
        if (!isDataRejection(error)) throw error;
        // TRICKY: some event's data made Postgres fail the batch: redo it one event per transaction, in
        // order, and dead-letter only the events Postgres refuses.
        results = await this.runOneByOne(parsed);
      }
      for (const [position, outcome] of results) outcomes[position] = outcome;
    }
    return outcomes.map((outcome, position) => {
      if (!outcome) throw new Error(`event ${position} of the batch got no outcome`);
      return outcome;
    });
  }

  private async runOneByOne(parsed: readonly PositionedEvent[]): Promise<PositionedOutcome[]> {
    const results: PositionedOutcome[] = [];
    for (const item of parsed) {
      try {
        results.push(...(await this.runWithRetries([item])));
      } catch (error) {
        if (!isDataRejection(error)) throw error;
        results.push([item.position, rejectionFor(item.event, 'dead_letter', 'postgres_rejected', error)]);
      }
    }
    return results;
  }

  private async runWithRetries(parsed: readonly PositionedEvent[]): Promise<PositionedOutcome[]> {
    const unavailableUuids = new Set<string>();
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.runTransaction(parsed, unavailableUuids);
      } catch (error) {
        if (error instanceof PersonUuidTakenError) {
          for (const uuid of error.uuids) unavailableUuids.add(uuid);
        } else if (!(error instanceof DistinctIdConflictError) && !isConcurrencyConflict(error)) {
          throw error;
        }
        if (attempt >= this.maxAttempts) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
      }
    }
  }

  private runTransaction(
    parsed: readonly PositionedEvent[],
    unavailableUuids: ReadonlySet<string>,
  ): Promise<PositionedOutcome[]> {
    return inPoolTransaction(this.pool, `BEGIN; SET LOCAL lock_timeout = ${this.lockTimeoutMs}`, (client) =>
      this.processInTransaction(client, parsed, unavailableUuids),
    );
  }

  private async processInTransaction(
    client: PoolClient,
    parsed: readonly PositionedEvent[],
    unavailableUuids: ReadonlySet<string>,
  ): Promise<PositionedOutcome[]> {
    const results: PositionedOutcome[] = [];
    const knownTeams = await lockTeams(client, [...new Set(parsed.map(({ event }) => event.teamId))]);
    const accepted: PositionedEvent[] = [];
    for (const item of parsed) {
      if (knownTeams.has(item.event.teamId)) {
        accepted.push(item);
      } else {
        results.push([
          item.position,
          rejectionFor(item.event, 'dropped', 'unknown_team', `project ${item.event.teamId} does not exist`),
        ]);
      }
    }
    if (accepted.length === 0) return results;
    const events = accepted.map(({ event }) => event);

    const distinctIds = distinctIdsToLoad(events);
    await lockDistinctIds(client, distinctIds);
    const loaded = await loadPersons(client, distinctIds);
    const groupTypes = await resolveGroupTypes(client, collectGroupTypes(events));

    const state = new PersonBatchState(unavailableUuids);
    state.load(loaded.persons, loaded.distinctIds);
    const groupWrites = new GroupWrites();
    const applier = new PersonEventApplier(state, groupTypes, groupWrites);
    for (const { position, event } of accepted) {
      try {
        results.push([position, applier.apply(event)]);
      } catch (error) {
        // A defect met by one event must not block the partition: dead-letter it with the reason.
        results.push([position, rejectionFor(event, 'dead_letter', 'processing_failed', error)]);
      }
    }

    await writePersons(client, state.plan());
    await upsertGroups(client, groupWrites.list());
    return results;
  }
}
