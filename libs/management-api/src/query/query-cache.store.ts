import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import type { HogQLQueryResponse } from './query.presenter';

/** PostHog's EXTENDED_CACHE_AGE (posthog/hogql_queries/query_runner.py): the most a lazy read accepts. */
const EXTENDED_AGE_MS = 24 * 60 * 60 * 1000;
/** How long an answer counts as recent; events keep arriving, so not long. */
export const RECENT_AGE_MS = 60 * 1000;

interface CachedAnswer {
  teamId: number;
  answer: HogQLQueryResponse;
  lastRefresh: Date;
}

/**
 * Answers per project and normalised query, in this process's memory, bounded in entries and bytes.
 * SECURITY: the key is made from the project id, and a read checks the entry's project again.
 */
@Injectable()
export class QueryCache {
  private readonly entries = new LRUCache<string, CachedAnswer>({
    max: 1_000,
    maxSize: 64 * 1024 * 1024,
    sizeCalculation: (entry) => Math.max(1, JSON.stringify(entry.answer).length),
    ttl: EXTENDED_AGE_MS,
  });

  /** The answer held for this project, of any age up to a day. */
  get(teamId: number, key: string): CachedAnswer | undefined {
    const entry = this.entries.get(key);
    return entry?.teamId === teamId ? entry : undefined;
  }

  set(teamId: number, key: string, answer: HogQLQueryResponse, lastRefresh: Date): void {
    this.entries.set(key, { teamId, answer, lastRefresh });
  }
}
