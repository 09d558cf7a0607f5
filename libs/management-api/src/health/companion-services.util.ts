import type { Registry } from 'prom-client';
import type { Readiness } from '@hogbase/service-runtime';

/** A ProbedService, or a service on another thread that answers through messages. */
export interface CompanionService {
  ready(): Promise<Readiness>;
  readonly metrics: Pick<Registry, 'metrics'>;
}

/**
 * Services of this process the management port answers for. One announced with `expect` and not
 * yet included is not ready, so the port never says ready before the whole process is.
 */
export class CompanionServices {
  private readonly services = new Map<string, CompanionService | undefined>();

  expect(...names: string[]): void {
    for (const name of names) if (!this.services.has(name)) this.services.set(name, undefined);
  }

  include(name: string, service: CompanionService): void {
    this.services.set(name, service);
  }

  async readiness(): Promise<Record<string, Readiness>> {
    const entries = [...this.services];
    const answers = await Promise.all(
      entries.map(([, service]) =>
        service
          ? service.ready().catch((error: unknown): Readiness => ({
              ready: false,
              checks: { readiness: error instanceof Error ? error.message : String(error) },
            }))
          : Promise.resolve<Readiness>({ ready: false, checks: { service: 'starting' } }),
      ),
    );
    return Object.fromEntries(entries.map(([name], index) => [name, answers[index]]));
  }

  registries(): Pick<Registry, 'metrics'>[] {
    return [...this.services.values()].flatMap((service) => (service ? [service.metrics] : []));
  }
}
