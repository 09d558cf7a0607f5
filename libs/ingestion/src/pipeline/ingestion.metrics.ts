import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Seconds: a batch is one Postgres transaction and its share of an insert. */
const WRITE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Each consumed message ends in one `ingestion_events_total` outcome, once its batch succeeded. */
export class IngestionMetrics {
  readonly events: Counter<'outcome' | 'reason'>;
  readonly consumed: Counter<'topic'>;
  readonly batchDuration: Histogram<'outcome'>;
  readonly postgresWrite: Histogram<'outcome'>;
  readonly clickhouseWrite: Histogram<'outcome'>;
  readonly clickhouseInsertRows: Histogram;
  readonly consumerLag: Gauge<'topic' | 'partition'>;
  readonly boundedDeadLetters: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.events = new Counter({
      name: 'ingestion_events_total',
      help: 'Consumed events by outcome (written, dropped, dead_letter) and reason',
      labelNames: ['outcome', 'reason'] as const,
      registers,
    });
    this.consumed = new Counter({
      name: 'ingestion_messages_consumed_total',
      help: 'Messages handed to ingestion by the queue, by topic (a retried batch counts again)',
      labelNames: ['topic'] as const,
      registers,
    });
    this.batchDuration = new Histogram({
      name: 'ingestion_batch_duration_seconds',
      help: 'One batch from the queue to written, by outcome (ok, or error: retried without committing)',
      labelNames: ['outcome'] as const,
      buckets: WRITE_BUCKETS,
      registers,
    });
    this.postgresWrite = new Histogram({
      name: 'ingestion_postgres_write_duration_seconds',
      help: "A batch's persons and groups in Postgres (one transaction), by outcome",
      labelNames: ['outcome'] as const,
      buckets: WRITE_BUCKETS,
      registers,
    });
    this.clickhouseWrite = new Histogram({
      name: 'ingestion_clickhouse_write_duration_seconds',
      help: "A batch's events written to ClickHouse (waiting for a shared insert included), by outcome",
      labelNames: ['outcome'] as const,
      buckets: WRITE_BUCKETS,
      registers,
    });
    this.clickhouseInsertRows = new Histogram({
      name: 'ingestion_clickhouse_insert_rows',
      help: 'Rows per ClickHouse insert (the batches written at the same time share one)',
      buckets: [1, 10, 100, 250, 500, 1_000, 2_000, 5_000, 10_000, 20_000],
      registers,
    });
    this.boundedDeadLetters = new Counter({
      name: 'ingestion_dead_letters_bounded_total',
      help:
        'Messages dead-lettered as a bounded copy (the head of the value, its size, source and reason): ' +
        'the whole message was larger than the dead-letter topic takes',
      registers,
    });
    this.consumerLag = new Gauge({
      name: 'ingestion_consumer_lag',
      help: 'Messages of a partition behind its end, after the last batch written (Kafka only)',
      labelNames: ['topic', 'partition'] as const,
      registers,
    });
  }
}

export async function timed<T>(histogram: Histogram<'outcome'>, work: () => Promise<T>): Promise<T> {
  const stop = histogram.startTimer();
  try {
    const result = await work();
    stop({ outcome: 'ok' });
    return result;
  } catch (error) {
    stop({ outcome: 'error' });
    throw error;
  }
}
