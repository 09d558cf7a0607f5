import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { insertEvents, rowContentErrorName, type ClickHouseClient, type EventRow } from '@hogbase/clickhouse';
import type { CapturedEvent } from '@hogbase/event-contract';
import type { PersonProcessor } from '../persons/person-processor';
import { DEAD_LETTER_TOPIC } from '@hogbase/event-contract';
import { toDeadLetter, type ConsumedBatch, type ConsumedMessage, type EventPublisher } from '@hogbase/queue';
import { toEventRow } from './event-row.mapper';

export interface EventBatchHandlerOptions {
  persons: PersonProcessor;
  clickhouse: ClickHouseClient;
  database: string;
  /** Where messages that cannot be processed go, with the reason in a header. */
  deadLetters: EventPublisher;
  logger: Logger;
  registry: Registry;
}

interface RowOfMessage {
  row: EventRow;
  message: ConsumedMessage;
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

/**
 * One consumed batch, in order: persons and groups in Postgres (one transaction), then every row
 * in one ClickHouse insert, then the dead letters. Each message ends as written, dead-lettered or
 * dropped (counted). Any throw is transient (Postgres, ClickHouse or the queue unavailable): the
 * consumer retries the whole batch without committing, which is safe because person processing
 * is idempotent and the events table deduplicates by UUID.
 */
export class EventBatchHandler {
  private readonly outcomes: Counter<'outcome' | 'reason'>;

  constructor(private readonly options: EventBatchHandlerOptions) {
    this.outcomes = new Counter({
      name: 'ingestion_events_total',
      help: 'Consumed events by outcome (written, dropped, dead_letter) and reason',
      labelNames: ['outcome', 'reason'] as const,
      registers: [options.registry],
    });
  }

  /**
   * One insert for the whole batch. When ClickHouse refuses a value of some row, the same insert
   * would fail on every retry and hold the partition forever: the rows are split in halves until
   * the refused ones stand alone, and those are dead-lettered with ClickHouse's reason. Any other
   * failure is thrown, and the consumer retries the batch.
   */
  private async insertRows(
    rows: RowOfMessage[],
    deadLetters: { message: ConsumedMessage; reason: string }[],
  ): Promise<void> {
    try {
      await insertEvents(
        this.options.clickhouse,
        this.options.database,
        rows.map(({ row }) => row),
      );
      this.outcomes.inc({ outcome: 'written', reason: '' }, rows.length);
    } catch (error) {
      const refused = rowContentErrorName(error);
      if (refused === undefined) throw error;
      if (rows.length === 1) {
        const detail = error instanceof Error ? error.message.slice(0, 300) : String(error);
        deadLetters.push({ message: rows[0].message, reason: `clickhouse_rejected: ${refused}: ${detail}` });
        return;
      }
      const middle = Math.ceil(rows.length / 2);
      await this.insertRows(rows.slice(0, middle), deadLetters);
      await this.insertRows(rows.slice(middle), deadLetters);
    }
  }

  readonly handle = async (batch: ConsumedBatch): Promise<void> => {
    const deadLetters: { message: ConsumedMessage; reason: string }[] = [];
    const captured: { message: ConsumedMessage; event: CapturedEvent }[] = [];
    for (const message of batch.messages) {
      const event = parseMessage(message);
      if (event) captured.push({ message, event });
      else deadLetters.push({ message, reason: 'invalid_json: the message is not a JSON object' });
    }

    const outcomes = await this.options.persons.processBatch(captured.map(({ event }) => event));
    const rows: RowOfMessage[] = [];
    const now = new Date();
    outcomes.forEach((outcome, index) => {
      const { message } = captured[index];
      if (outcome.outcome === 'ok') {
        try {
          rows.push({ row: toEventRow(outcome, now, message.offset), message });
        } catch (error) {
          deadLetters.push({ message, reason: `invalid_timestamp: ${(error as Error).message}` });
        }
      } else if (outcome.outcome === 'dead_letter') {
        deadLetters.push({ message, reason: `${outcome.reason}: ${outcome.detail}` });
      } else {
        this.outcomes.inc({ outcome: 'dropped', reason: outcome.reason });
        this.options.logger.info(
          { uuid: outcome.uuid, teamId: outcome.teamId, reason: outcome.reason },
          'event dropped',
        );
      }
    });

    if (rows.length > 0) await this.insertRows(rows, deadLetters);
    if (deadLetters.length > 0) {
      const source = (message: ConsumedMessage) => ({
        topic: batch.topic,
        partition: batch.partition,
        offset: message.offset,
      });
      await this.options.deadLetters.publish(
        DEAD_LETTER_TOPIC,
        deadLetters.map(({ message, reason }) => toDeadLetter(message, reason, source(message))),
      );
      for (const { reason } of deadLetters)
        this.outcomes.inc({ outcome: 'dead_letter', reason: reason.split(':')[0] });
      this.options.logger.warn(
        { count: deadLetters.length, first: deadLetters[0].reason },
        'events dead-lettered',
      );
    }
  };
}
