import { Injectable } from '@nestjs/common';
import { EventStore } from '../events/event-store.service';

/** What a backfill reads of the project's events in ClickHouse. */
@Injectable()
export class BatchExportEventsRepository {
  constructor(private readonly events: EventStore) {}

  /** The project's first event's timestamp, or null when it has none. */
  async earliestEvent(teamId: number): Promise<Date | null> {
    const [row] = await this.events.select<{ earliest: string | null }>(
      `SELECT if(count() = 0, NULL, toString(min(timestamp))) AS earliest FROM ${this.events.table} WHERE team_id = {teamId:Int64}`,
      { teamId },
    );
    return row?.earliest ? new Date(`${row.earliest.replace(' ', 'T')}Z`) : null;
  }
}
