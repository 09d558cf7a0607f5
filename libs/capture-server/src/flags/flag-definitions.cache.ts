import { createHash } from 'node:crypto';
import { CompiledFlags } from '@hogbase/flag-evaluation';
import { FlagStore, type TeamFlags } from '@hogbase/flag-store';

interface Entry {
  flags: TeamFlags;
  /** The flags prepared for evaluation, once per read rather than on every `/flags` call. */
  compiled: CompiledFlags;
  /** A digest of the definitions: the ETag of local evaluation. */
  version: string;
  loadedAt: number;
}

export interface FlagDefinitionsCacheOptions {
  /** How long definitions are served before they are read again: a flag change shows within this. */
  ttlMs?: number;
  maxTeams?: number;
}

export class FlagDefinitionsUnavailableError extends Error {
  constructor(cause: unknown) {
    super('flag definitions could not be read: Postgres is unavailable', { cause });
    this.name = 'FlagDefinitionsUnavailableError';
  }
}

/**
 * Each project's flag definitions in memory, read again once older than `ttlMs`: SDK calls cost no
 * query for definitions, and a change made over the management API answers within seconds.
 * Concurrent reads of a project share one query; when Postgres fails, what was read last keeps
 * being served (marked stale) rather than failing every SDK call.
 */
export class FlagDefinitionsCache {
  private readonly entries = new Map<number, Entry>();
  private readonly inFlight = new Map<number, Promise<Entry>>();
  private readonly ttlMs: number;
  private readonly maxTeams: number;

  constructor(
    private readonly store: FlagStore,
    options: FlagDefinitionsCacheOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.ttlMs = options.ttlMs ?? 2_000;
    this.maxTeams = options.maxTeams ?? 10_000;
  }

  async get(
    teamId: number,
  ): Promise<{ flags: TeamFlags; compiled: CompiledFlags; version: string; stale: boolean }> {
    const entry = this.entries.get(teamId);
    if (entry && this.now() - entry.loadedAt < this.ttlMs) return { ...entry, stale: false };
    try {
      return { ...(await this.load(teamId)), stale: false };
    } catch (error) {
      if (entry) return { ...entry, stale: true };
      throw new FlagDefinitionsUnavailableError(error);
    }
  }

  /** Drops a project's definitions (every project's when null): its flags or cohorts changed. */
  forget(teamId: number | null): void {
    if (teamId === null) this.entries.clear();
    else this.entries.delete(teamId);
  }

  private load(teamId: number): Promise<Entry> {
    let pending = this.inFlight.get(teamId);
    if (!pending) {
      pending = this.store
        .teamFlags(teamId)
        .then((flags) => {
          const version = createHash('sha1').update(JSON.stringify(flags)).digest('hex');
          const entry: Entry = {
            flags,
            compiled: new CompiledFlags(flags.flags),
            version,
            loadedAt: this.now(),
          };
          if (this.entries.size >= this.maxTeams && !this.entries.has(teamId)) {
            const oldest = this.entries.keys().next().value;
            if (oldest !== undefined) this.entries.delete(oldest);
          }
          this.entries.delete(teamId);
          this.entries.set(teamId, entry);
          return entry;
        })
        .finally(() => this.inFlight.delete(teamId));
      this.inFlight.set(teamId, pending);
    }
    return pending;
  }
}
