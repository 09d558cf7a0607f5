import { performance } from 'node:perf_hooks';
import { ensureTopics, KafkaEventPublisher, type ConsumedBatch } from '@hogbase/queue';
import type { BenchConfig } from './bench.config';
import type { BenchDatabase } from './bench-database.util';
import type { BenchIngestion, IngestionPipeline } from './ingestion-pipeline.util';
import { median, printRoundsTable, summaryLine, type BenchSummary, type Metric } from './report.util';
import { recordSdkRequests, toQueueMessages } from './sdk-requests.util';

/** Per publish call while filling a topic. */
const PRODUCE_CHUNK = 5_000;

interface HandlerCalls {
  /** Persons transaction + ClickHouse insert, ms. */
  medianMs: number;
  /** One partition's part of a fetch. */
  medianEvents: number;
  postgresMs: number;
  /** Waiting for a shared insert included. */
  clickhouseMs: number;
  /** Concurrent calls share one. */
  rowsPerInsert: number;
}

interface Drain {
  eventsPerSecond: number;
  /** Group join, offsets, first fetch. */
  startupSeconds: number;
  /** The whole process's CPU (chDB's threads too) per 1,000 events: steadier than the rate on a busy machine. */
  cpuMsPer1000: number;
}

type StartConsuming = (
  onBatch: (batch: ConsumedBatch, startedAt: number) => void,
) => Promise<{ stop(): Promise<void> }>;

async function drain(groupId: string, expected: number, start: StartConsuming): Promise<Drain> {
  const startedAt = performance.now();
  const cpuAtStart = process.cpuUsage();
  let firstBatchAt: number | undefined;
  let handled = 0;
  let finish: (doneAt: number) => void = () => undefined;
  const done = new Promise<number>((resolve) => (finish = resolve));
  // Generous: a slow machine shows a low figure, not a failure.
  const timeoutMs = Math.max(120_000, expected * 5);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${groupId}: ${handled} of ${expected} events after ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
  });
  let consuming: { stop(): Promise<void> } | undefined;
  try {
    consuming = await start((batch, batchStartedAt) => {
      firstBatchAt = Math.min(firstBatchAt ?? batchStartedAt, batchStartedAt);
      handled += batch.messages.length;
      if (handled >= expected) finish(performance.now());
    });
    const doneAt = await Promise.race([done, timeout]);
    const cpu = process.cpuUsage(cpuAtStart);
    const first = firstBatchAt ?? startedAt;
    return {
      eventsPerSecond: expected / ((doneAt - first) / 1000),
      startupSeconds: (first - startedAt) / 1000,
      cpuMsPer1000: (cpu.user + cpu.system) / 1000 / (expected / 1000),
    };
  } finally {
    clearTimeout(timer);
    await consuming?.stop();
  }
}

/**
 * 3. Kafka → ingestion → ClickHouse: each round's topic drained twice in fresh groups, a JSON-parse
 * baseline then the real path; ClickHouse must then hold the project's every row.
 */
export async function runIngestionBench(
  config: BenchConfig,
  pipeline: IngestionPipeline,
  database: BenchDatabase,
  log: (message: string) => void,
): Promise<BenchSummary> {
  const requests = await recordSdkRequests({
    token: 'phc_ingestion_bench',
    requests: Math.ceil(config.ingestionEvents / config.eventsPerBatch),
    eventsPerBatch: config.eventsPerBatch,
    persons: config.persons,
    seed: 3,
  });
  const events = requests.length * config.eventsPerBatch;
  const producer = new KafkaEventPublisher({
    brokers: pipeline.kafka.brokers,
    clientId: 'hogbase-bench-producer',
    timeoutMs: 60_000,
  });
  const baseline: Drain[] = [];
  const ingestion: Drain[] = [];
  const calls: HandlerCalls[] = [];
  try {
    for (let round = 1; round <= config.rounds; round += 1) {
      const project = await database.createProject(`ingestion round ${round}`);
      const messages = toQueueMessages(requests, project.id, project.token);
      const topic = `bench_ingestion_${process.pid}_${round}`;
      await ensureTopics(pipeline.kafka.brokers, [
        { name: topic, partitions: pipeline.kafka.topicPartitions, replicationFactor: 1 },
      ]);
      const producedAt = performance.now();
      for (let start = 0; start < messages.length; start += PRODUCE_CHUNK) {
        await producer.publish(topic, messages.slice(start, start + PRODUCE_CHUNK));
      }
      const produceSeconds = (performance.now() - producedAt) / 1000;
      log(`round ${round}: ${messages.length} events on ${topic} in ${produceSeconds.toFixed(1)} s`);

      // Baseline first: both read the same topic, which the broker still has in the page cache.
      const consumeOnly = await drain(`${topic}_baseline`, messages.length, async (onBatch) => {
        const consumer = pipeline.createConsumer(`${topic}_baseline`, [topic], true);
        await consumer.start((batch) => {
          const startedAt = performance.now();
          for (const message of batch.messages) JSON.parse(message.value);
          onBatch(batch, startedAt);
          return Promise.resolve();
        });
        return consumer;
      });
      baseline.push(consumeOnly);

      let service: BenchIngestion | undefined;
      const ingested = await drain(`${topic}_ingestion`, messages.length, async (onBatch) => {
        service = await pipeline.startIngestion(`${topic}_ingestion`, [topic], true, onBatch);
        return service;
      });
      ingestion.push(ingested);
      const { durationsMs, sizes } = service!.takeCalls();
      calls.push({
        medianMs: median(durationsMs),
        medianEvents: median(sizes),
        ...(await service!.stageMeans()),
      });
      const stored = await pipeline.countEvents(project.id);
      const outcomes = JSON.stringify(await service!.outcomes());
      if (stored !== messages.length) {
        throw new Error(`round ${round}: ${stored} of ${messages.length} events in ClickHouse (${outcomes})`);
      }
      log(
        `round ${round}: consume-only ${Math.round(consumeOnly.eventsPerSecond)} events/s, ` +
          `ingestion ${Math.round(ingested.eventsPerSecond)} events/s, ${stored} rows in ClickHouse ${outcomes}`,
      );
    }
  } finally {
    await producer.close();
  }

  const metrics: Metric[] = [
    {
      key: 'consume_only_events_per_s',
      label: 'consume + JSON.parse only: events/s',
      rounds: baseline.map((drained) => drained.eventsPerSecond),
    },
    {
      key: 'ingestion_events_per_s',
      label: 'ingestion → Postgres + ClickHouse: events/s',
      rounds: ingestion.map((drained) => drained.eventsPerSecond),
    },
    {
      key: 'ingestion_to_consume_only',
      label: 'ingestion / consume-only',
      rounds: ingestion.map((drained, round) => drained.eventsPerSecond / baseline[round].eventsPerSecond),
      digits: 2,
    },
    {
      key: 'rows_per_insert',
      label: 'ingestion: rows per ClickHouse insert, mean',
      rounds: calls.map((call) => call.rowsPerInsert),
    },
    {
      key: 'consume_only_cpu_ms_per_1000',
      label: 'consume-only: process CPU per 1,000 events (ms)',
      rounds: baseline.map((drained) => drained.cpuMsPer1000),
    },
    {
      key: 'ingestion_cpu_ms_per_1000',
      label: 'ingestion: process CPU per 1,000 events (ms)',
      rounds: ingestion.map((drained) => drained.cpuMsPer1000),
    },
    {
      key: 'handler_call_ms',
      label: 'ingestion: handler call, median (ms)',
      rounds: calls.map((call) => call.medianMs),
    },
    {
      key: 'handler_call_events',
      label: 'ingestion: events per handler call, median',
      rounds: calls.map((call) => call.medianEvents),
    },
    {
      key: 'persons_ms',
      label: 'ingestion: persons transaction, mean ms per call',
      rounds: calls.map((call) => call.postgresMs),
    },
    {
      key: 'clickhouse_ms',
      label: 'ingestion: ClickHouse write, mean ms per call',
      rounds: calls.map((call) => call.clickhouseMs),
    },
    {
      key: 'ingestion_startup_s',
      label: 'ingestion: consumer start → first batch (s)',
      rounds: ingestion.map((drained) => drained.startupSeconds),
      digits: 2,
    },
  ];
  printRoundsTable(
    `3. Ingestion: ${events.toLocaleString('en-US')} events from Kafka (${pipeline.kafka.topicPartitions} partitions) into persons + chDB, per round`,
    metrics,
  );
  return summaryLine(
    'ingestion',
    {
      events,
      persons: config.persons,
      partitions: pipeline.kafka.topicPartitions,
    },
    metrics,
  );
}
