import { createHash } from 'node:crypto';
import { CompiledFlags } from '@hogbase/flag-evaluation';
import { FlagStore, type TeamFlags } from '@hogbase/flag-store';
import { FlagDefinitionsUnavailableError } from '../capture.errors';

interface Entry {
  flags: TeamFlags;
  /** Once per read rather than on every `/flags` call. */
  compiled: CompiledFlags;
  /** The ETag of local evaluation. */
  version: string;
  loadedAt: number;
}

export interface FlagDefinitionsCacheOptions {
  /** A flag change shows within this. */
  ttlMs?: number;
  maxTeams?: number;
}

/**
 * Each project's flag definitions in memory for `ttlMs`. When Postgres fails, what was read last is
 * served, marked stale, rather than failing every SDK call.
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

  /** Every project's when null. */
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
