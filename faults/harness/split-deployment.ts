import { freePort, isRunning } from '@hogbase/test-support';
import { AppSlot, startFaultEngines, type FaultEngines } from './deployment';
import { waitForGroupDrained } from './group-drain';

const DRAIN_TIMEOUT_MS = 180_000;

export type ServiceName = 'capture' | 'ingestion';

export interface ListedEvents {
  /** FINAL, with repeats if any. */
  uuids: string[];
  rawRows: number;
}

/** Capture and ingestion on engines the suite controls, on fixed ports so a restarted one is where the sender expects it. */
export class SplitDeployment {
  readonly capture: AppSlot<ServiceName>;
  readonly ingestion: AppSlot<ServiceName>;
  readonly postgres: FaultEngines['postgres'];
  readonly kafka: FaultEngines['kafka'];

  private constructor(
    private readonly engines: FaultEngines,
    readonly project: { id: number; apiKey: string },
    ports: { capture: number; ingestion: number },
  ) {
    this.postgres = engines.postgres;
    this.kafka = engines.kafka;
    // Started when their probe server answers: a scenario may start them with a dependency down.
    this.capture = new AppSlot<ServiceName>(
      'capture',
      `http://127.0.0.1:${ports.capture}`,
      { ...engines.env, CAPTURE_PORT: String(ports.capture) },
      'listening',
    );
    this.ingestion = new AppSlot<ServiceName>(
      'ingestion',
      `http://127.0.0.1:${ports.ingestion}`,
      { ...engines.env, INGESTION_PORT: String(ports.ingestion) },
      'listening',
    );
  }

  static async start(log: (message: string) => void): Promise<SplitDeployment> {
    const engines = await startFaultEngines(log);
    try {
      const credentials = await engines.bootstrap(`owner-${engines.groupId}@faults.test`);
      const deployment = new SplitDeployment(
        engines,
        { id: credentials.project_id, apiKey: credentials.project_api_key },
        { capture: await freePort(), ingestion: await freePort() },
      );
      // Ingestion first: it migrates ClickHouse and creates the topics capture publishes to.
      await deployment.ingestion.start();
      await deployment.ingestion.waitReady();
      await deployment.capture.start();
      await deployment.capture.waitReady();
      return deployment;
    } catch (error) {
      await engines.destroy();
      throw error;
    }
  }

  get groupId(): string {
    return this.engines.groupId;
  }

  unexpectedExits(): string[] {
    return [...this.capture.unexpectedExits, ...this.ingestion.unexpectedExits];
  }

  async drained(): Promise<void> {
    await waitForGroupDrained([this.kafka.brokers], this.engines.groupId, DRAIN_TIMEOUT_MS, () =>
      this.ingestion.output(),
    );
  }

  /** chDB lets one process open its data path: ingestion is stopped (it must exit 0) for the read. */
  async listedEvents(): Promise<ListedEvents> {
    const status = await this.ingestion.stop();
    if (status.code !== 0) throw new Error(`ingestion exited with ${JSON.stringify(status)} on SIGTERM`);
    try {
      return await this.engines.chDbProcess<ListedEvents>(
        'faults/harness/listed-events.process.ts',
        this.project.id,
      );
    } finally {
      await this.ingestion.start();
      await this.ingestion.waitReady();
    }
  }

  async persons(): Promise<{ persons: number; distinctIds: number }> {
    const [row] = await this.postgres.superuser<{ persons: string; distinct_ids: string }>(
      `SELECT (SELECT count(*) FROM persons WHERE team_id = $1) AS persons,
              (SELECT count(*) FROM person_distinct_ids WHERE team_id = $1) AS distinct_ids`,
      [this.project.id],
    );
    return { persons: Number(row.persons), distinctIds: Number(row.distinct_ids) };
  }

  async destroy(): Promise<void> {
    await this.capture.destroy();
    await this.ingestion.destroy();
    await this.engines.destroy();
  }
}

export { isRunning };
