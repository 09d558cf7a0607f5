import path from 'node:path';

/** What the benchmarks use of tools/kafka-broker.mjs (plain ESM, no types). */
interface KafkaBrokerModule {
  startKafkaBroker: (options: {
    port: number;
    log: (message: string) => void;
  }) => Promise<{ brokers: string; stop(): Promise<void> }>;
}

export interface KafkaBrokers {
  brokers: string[];
  /** Stops the broker if this process started it (its data goes with it). */
  stop(): Promise<void>;
}

/**
 * `brokers` when given (KAFKA_BROKERS); else a single KRaft broker from the cached jars on free
 * loopback ports, as `npm test` starts one.
 *
 * NOTE: tools/kafka-broker.mjs kills the JVM from a process 'exit' hook if this process dies
 * without stop(), so a crashed benchmark does not leave a broker behind.
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
  // An absolute path works for both a native import() and the require() swc compiles it to
  // (Node loads an ES module through require when it has no top-level await).
  const modulePath = path.resolve(__dirname, '..', 'tools', 'kafka-broker.mjs');
  const { startKafkaBroker } = (await import(modulePath)) as KafkaBrokerModule;
  const kafka = await startKafkaBroker({ port: 0, log });
  return { brokers: kafka.brokers.split(','), stop: () => kafka.stop() };
}
