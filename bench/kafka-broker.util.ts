import path from 'node:path';

/** tools/kafka-broker.mjs is plain ESM, no types. */
interface KafkaBrokerModule {
  startKafkaBroker: (options: {
    port: number;
    log: (message: string) => void;
  }) => Promise<{ brokers: string; stop(): Promise<void> }>;
}

export interface KafkaBrokers {
  brokers: string[];
  /** Only if this process started it. */
  stop(): Promise<void>;
}

/**
 * `brokers` when given, else a KRaft broker as `npm test` starts one; the tool kills the JVM from an
 * 'exit' hook, so a crashed benchmark leaves no broker behind.
 */
export async function startKafka(
  brokers: string[] | undefined,
  log: (message: string) => void,
): Promise<KafkaBrokers> {
  if (brokers) {
    log(`Kafka: using KAFKA_BROKERS=${brokers.join(',')}`);
    return { brokers, stop: () => Promise.resolve() };
  }
  log('starting a Kafka broker (single KRaft node on 127.0.0.1, jars cached in ~/.cache/hogbase)');
  // Absolute: works for a native import() and swc's require() (Node requires an ES module without top-level await).
  const modulePath = path.resolve(__dirname, '..', 'tools', 'kafka-broker.mjs');
  const { startKafkaBroker } = (await import(modulePath)) as KafkaBrokerModule;
  const kafka = await startKafkaBroker({ port: 0, log });
  return { brokers: kafka.brokers.split(','), stop: () => kafka.stop() };
}
