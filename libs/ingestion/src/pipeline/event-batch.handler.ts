import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { rowContentErrorName, type EventRow, type EventsWriter } from '@hogbase/clickhouse';
import type { CapturedEvent } from '@hogbase/event-contract';
import type { DestinationEvent } from '@hogbase/apps-runtime';
import type { PersonProcessor } from '../persons/person-processor.service';
import type { ProcessedEvent, RejectedEvent } from '../persons/person-processing.types';
import { parseCapturedEvent, type ParsedEvent } from '../events/parse-captured-event.util';
import { DEAD_LETTER_TOPIC, type QueueMessage } from '@hogbase/event-contract';
import {
  DEAD_LETTER_TRUNCATED_HEADER,
  MessageTooLargeError,
  toDeadLetter,
  type ConsumedBatch,
  type ConsumedMessage,
  type DecodedBatch,
  type DecodingBatchHandler,
  type EventPublisher,
} from '@hogbase/queue';
import { CoalescedInsert } from './coalesced-insert.util';
import { toEventRow } from './event-row.mapper';
import { IngestionMetrics, timed } from './ingestion.metrics';
import type { IngestedEventMarker } from './ingested-event.marker';
import type { TeamTokenCache } from './team-token.cache';

export interface EventBatchHandlerOptions {
  persons: PersonProcessor;
  events: EventsWriter;
  deadLetters: EventPublisher;
  tokens: TeamTokenCache;
  ingestedEvents: IngestedEventMarker;
  logger: Logger;
  registry: Registry;
  /** Run before persons are processed. */
  transformations?: {
    transformationTeams(): Promise<ReadonlySet<number>>;
    transform(event: CapturedEvent): Promise<CapturedEvent | null>;
  };
  /** Given the stored events before the batch is committed: a throw retries it, none misses them. */
  destinations?: {
    destinationTeams(): Promise<ReadonlySet<number>>;
    handOff(events: DestinationEvent[]): Promise<void>;
  };
}

/** Once the dead-letter topic refused a first copy as too large. */
const SMALL_DEAD_LETTER_BYTES = 8 * 1024;
const NONE_REFUSED: ReadonlySet<number> = new Set();

interface RowOfMessage {
  row: EventRow;
  message: ConsumedMessage;
  event: ProcessedEvent;
}

/** Undefined for a message that is not a JSON object. */
export type DecodedEvent = { event: CapturedEvent; parsed: ParsedEvent | RejectedEvent } | undefined;

interface CapturedMessage {
  message: ConsumedMessage;
  event: CapturedEvent;
  parsed: ParsedEvent | RejectedEvent | undefined;
}

function parseMessage(message: ConsumedMessage): CapturedEvent | undefined {
  try {
    const value: unknown = JSON.parse(message.value);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as CapturedEvent)
      : undefined;
  } catch {
    return undefined;
  }
}

/** One consumed batch, as libs/ingestion/README.md lays out; any throw is transient and redelivers it. */
export class EventBatchHandler implements DecodingBatchHandler<DecodedEvent> {
  private readonly metrics: IngestionMetrics;
  private readonly outcomes: IngestionMetrics['events'];
  private readonly inserts: CoalescedInsert<EventRow>;

  constructor(private readonly options: EventBatchHandlerOptions) {
    this.metrics = new IngestionMetrics(options.registry);
    this.outcomes = this.metrics.events;
    this.inserts = new CoalescedInsert((rows) => {
      this.metrics.clickhouseInsertRows.observe(rows.length);
      return options.events.insert(rows);
    });
  }

  /**
   * A row ClickHouse refuses for its content would fail every retry and hold the partition: the rows
   * are halved until the refused ones stand alone, then dead-lettered. Resolves with the rows written.
   */
  private async insertRows(
    rows: RowOfMessage[],
    deadLetters: { message: ConsumedMessage; reason: string }[],
  ): Promise<number> {
    try {
      await timed(this.metrics.clickhouseWrite, () => this.inserts.write(rows.map(({ row }) => row)));
      return rows.length;
    } catch (error) {
      const refused = rowContentErrorName(error);
      if (refused === undefined) throw error;
      if (rows.length === 1) {
        const detail = error instanceof Error ? error.message.slice(0, 300) : String(error);
        deadLetters.push({ message: rows[0].message, reason: `clickhouse_rejected: ${refused}: ${detail}` });
        return 0;
      }
      const middle = Math.ceil(rows.length / 2);
      const written = await this.insertRows(rows.slice(0, middle), deadLetters);
      return written + (await this.insertRows(rows.slice(middle), deadLetters));
    }
  }

  /** Sequential, so one person's events keep their order. */
  private async transform(
    captured: CapturedMessage[],
    dropped: { uuid: string | null; teamId: number | null; reason: string }[],
  ): Promise<void> {
    const transformations = this.options.transformations;
    if (!transformations) return;
    const teams = await transformations.transformationTeams();
    if (!captured.some(({ event }) => teams.has(event.team_id))) return;
    const kept: typeof captured = [];
    for (const entry of captured) {
      if (!teams.has(entry.event.team_id)) {
        kept.push(entry);
        continue;
      }
      const transformed = await transformations.transform(entry.event);
      if (transformed) kept.push({ message: entry.message, event: transformed, parsed: undefined });
      else dropped.push({ uuid: entry.event.uuid, teamId: entry.event.team_id, reason: 'dropped_by_app' });
    }
    captured.splice(0, captured.length, ...kept);
  }

  /** Capture resolved the project from the token, but anyone who can write to the topic can name any. */
  private async keepOwnTokens(
    captured: CapturedMessage[],
    deadLetters: { message: ConsumedMessage; reason: string }[],
  ): Promise<void> {
    const { tokens } = this.options;
    await tokens.load(captured.map(({ event }) => event));
    let kept = 0;
    for (const entry of captured) {
      if (tokens.belongs(entry.event)) {
        captured[kept++] = entry;
      } else {
        deadLetters.push({
          message: entry.message,
          reason: `invalid_token: the message's token is not the API token of project ${String(entry.event.team_id)}`,
        });
      }
    }
    captured.length = kept;
  }

  /**
   * A copy the broker still refuses as too large goes alone, then as 8 KiB, then is dropped with an
   * error line: a message must leave its partition. Resolves with the positions dropped.
   */
  private async publishDeadLetters(
    batch: ConsumedBatch,
    deadLetters: { message: ConsumedMessage; reason: string }[],
  ): Promise<ReadonlySet<number>> {
    const { deadLetters: publisher, logger } = this.options;
    const copyOf = ({ message, reason }: { message: ConsumedMessage; reason: string }, maxBytes?: number) =>
      toDeadLetter(
        message,
        reason,
        { topic: batch.topic, partition: batch.partition, offset: message.offset },
        maxBytes ?? publisher.maxMessageBytes,
      );
    const copies = deadLetters.map((deadLetter) => copyOf(deadLetter));
    const refused = new Set<number>();
    if (!(await this.publishUnlessTooLarge(copies))) {
      for (const [index, deadLetter] of deadLetters.entries()) {
        if (await this.publishUnlessTooLarge([copies[index]])) continue;
        const small = copyOf(deadLetter, SMALL_DEAD_LETTER_BYTES);
        copies[index] = small;
        if (await this.publishUnlessTooLarge([small])) continue;
        refused.add(index);
        logger.error(
          {
            topic: batch.topic,
            partition: batch.partition,
            offset: deadLetter.message.offset,
            reason: deadLetter.reason,
          },
          'the dead-letter topic refuses even a small copy of this message as too large: dropped',
        );
      }
    }
    const bounded = copies.filter((copy) => copy.headers?.[DEAD_LETTER_TRUNCATED_HEADER] === 'true').length;
    if (bounded > 0) this.metrics.boundedDeadLetters.inc(bounded);
    logger.warn(
      {
        count: deadLetters.length - refused.size,
        bounded,
        refused: refused.size,
        first: deadLetters[0].reason,
      },
      'events dead-lettered',
    );
    return refused;
  }

  private async publishUnlessTooLarge(messages: QueueMessage[]): Promise<boolean> {
    try {
      await this.options.deadLetters.publish(DEAD_LETTER_TOPIC, messages);
      return true;
    } catch (error) {
      if (error instanceof MessageTooLargeError) return false;
      throw error;
    }
  }

  readonly decode = (message: ConsumedMessage): DecodedEvent => {
    const event = parseMessage(message);
    return event && { event, parsed: parseCapturedEvent(event) };
  };

  readonly handle = async (batch: DecodedBatch<DecodedEvent>): Promise<void> => {
    this.metrics.consumed.inc({ topic: batch.topic }, batch.messages.length);
    await timed(this.metrics.batchDuration, () => this.handleBatch(batch));
    this.recordLag(batch);
  };

  private recordLag(batch: ConsumedBatch): void {
    const last = batch.messages.at(-1);
    const end = batch.highWatermark;
    const digits = /^\d+$/;
    if (!last || end === undefined || !digits.test(end) || !digits.test(last.offset)) return;
    const lag = BigInt(end) - BigInt(last.offset) - 1n;
    this.metrics.consumerLag.set(
      { topic: batch.topic, partition: String(batch.partition) },
      Number(lag > 0n ? lag : 0n),
    );
  }

  // Outcomes are counted once the whole batch succeeded: a batch that throws comes again.
  private async handleBatch(batch: DecodedBatch<DecodedEvent>): Promise<void> {
    const dropped: { uuid: string | null; teamId: number | null; reason: string }[] = [];
    const deadLetters: { message: ConsumedMessage; reason: string }[] = [];
    const captured: CapturedMessage[] = [];
    const decoded = batch.decoded();
    batch.messages.forEach((message, index) => {
      const decodedEvent = decoded[index];
      if (decodedEvent) captured.push({ message, ...decodedEvent });
      else deadLetters.push({ message, reason: 'invalid_json: the message is not a JSON object' });
    });

    if (captured.length > 0) await this.keepOwnTokens(captured, deadLetters);
    if (this.options.transformations) await this.transform(captured, dropped);

    const outcomes = await timed(this.metrics.postgresWrite, () =>
      this.options.persons.processParsed(
        captured.map(({ event, parsed }) => parsed ?? parseCapturedEvent(event)),
      ),
    );
    const rows: RowOfMessage[] = [];
    const now = new Date();
    outcomes.forEach((outcome, index) => {
      const { message, event } = captured[index];
      if (outcome.outcome === 'ok') {
        try {
          rows.push({
            row: toEventRow(outcome, receivedAt(event, now), message.offset),
            message,
            event: outcome,
          });
        } catch (error) {
          // A RangeError either way: a timestamp ClickHouse cannot hold, or properties nested past
          // JSON.stringify's stack (capture refuses those, another producer may not).
          const detail = (error as Error).message;
          const reason = detail.includes('call stack') ? 'unserializable' : 'invalid_timestamp';
          deadLetters.push({ message, reason: `${reason}: ${detail}` });
        }
      } else if (outcome.outcome === 'dead_letter') {
        deadLetters.push({ message, reason: `${outcome.reason}: ${outcome.detail}` });
      } else {
        dropped.push({ uuid: outcome.uuid, teamId: outcome.teamId, reason: outcome.reason });
      }
    });

    // What is left is the insert: its text is built at once, then chDB works on its own threads.
    batch.waiting();
    const written = rows.length > 0 ? await this.insertRows(rows, deadLetters) : 0;
    if (written > 0) {
      const refused = new Set(deadLetters.map(({ message }) => message));
      const stored = rows.filter(({ message }) => !refused.has(message));
      await this.options.ingestedEvents.stored(stored.map(({ event }) => event.teamId));
      const destinations = this.options.destinations;
      if (destinations) {
        const teams = await destinations.destinationTeams();
        const wanted = stored.filter(({ event }) => teams.has(event.teamId));
        if (wanted.length > 0) await destinations.handOff(wanted.map(toDestinationEvent));
      }
    }
    const undeliverable =
      deadLetters.length > 0 ? await this.publishDeadLetters(batch, deadLetters) : NONE_REFUSED;

    if (written > 0) this.outcomes.inc({ outcome: 'written', reason: '' }, written);
    deadLetters.forEach(({ reason }, index) => {
      if (undeliverable.has(index)) this.outcomes.inc({ outcome: 'dropped', reason: 'dead_letter_refused' });
      else this.outcomes.inc({ outcome: 'dead_letter', reason: reason.split(':')[0] });
    });
    for (const event of dropped) {
      this.outcomes.inc({ outcome: 'dropped', reason: event.reason });
      this.options.logger.info(event, 'event dropped');
    }
  }
}

/** When capture received it: a redelivery writes the same row, and batch exports can tell a late arrival. */
function receivedAt(event: CapturedEvent, processedAt: Date): Date {
  const received = new Date(event.now);
  return Number.isNaN(received.getTime()) ? processedAt : received;
}

function toDestinationEvent({ row, event }: RowOfMessage): DestinationEvent {
  return {
    uuid: event.uuid,
    event: row.event,
    team_id: event.teamId,
    distinct_id: event.distinctId,
    properties: JSON.parse(row.properties) as Record<string, unknown>,
    timestamp: event.timestamp,
    elements_chain: row.elements_chain ?? '',
    person: { uuid: event.personId, properties: event.personProperties, created_at: event.personCreatedAt },
  };
}
