import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { AppCapturedEvent } from '@hogbase/apps-runtime';
import { EVENTS_TOPIC, toQueueMessage, type CapturedEvent } from '@hogbase/event-contract';
import type { EventPublisher } from '@hogbase/queue';

/** A rotated token applies within this. */
const TOKEN_TTL_MS = 60_000;

/**
 * Onto the events topic as capture would put an SDK's event. Resolves once the queue took it, so an
 * app that moves its cursor after capturing never skips an item.
 */
export class AppCapturePublisher {
  private readonly tokens = new Map<number, { token: string; loadedAt: number }>();

  constructor(
    private readonly pool: Pick<Pool, 'query'>,
    private readonly publisher: EventPublisher,
  ) {}

  async capture(appEvent: AppCapturedEvent): Promise<void> {
    const token = await this.tokenOf(appEvent.teamId);
    const now = new Date().toISOString();
    const uuid = uuidv7();
    const distinctId = appEvent.distinctId.slice(0, 200);
    const event: CapturedEvent = {
      uuid,
      distinct_id: distinctId,
      ip: null,
      data: JSON.stringify({
        event: appEvent.event,
        distinct_id: distinctId,
        properties: appEvent.properties,
        timestamp: now,
        uuid,
      }),
      now,
      sent_at: null,
      token,
      team_id: appEvent.teamId,
      event: appEvent.event,
      timestamp: now,
    };
    await this.publisher.publish(EVENTS_TOPIC, [toQueueMessage(event)]);
  }

  private async tokenOf(teamId: number): Promise<string> {
    const cached = this.tokens.get(teamId);
    if (cached && Date.now() - cached.loadedAt < TOKEN_TTL_MS) return cached.token;
    const { rows } = await this.pool.query<{ api_token: string }>(
      'SELECT api_token FROM teams WHERE id = $1',
      [teamId],
    );
    if (rows.length === 0) throw new Error(`project ${teamId} does not exist`);
    this.tokens.set(teamId, { token: rows[0].api_token, loadedAt: Date.now() });
    return rows[0].api_token;
  }
}
