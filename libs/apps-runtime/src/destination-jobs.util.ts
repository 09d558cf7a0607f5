import type { DestinationEvent } from './app-destinations';

/** Most events of one destinations batch job. */
export const MAX_EVENTS_PER_JOB = 500;
/**
 * Most bytes of events (as JSON) one batch job carries: jobs are rows of the job engine's Postgres,
 * the embedded one under npm start, written in ingestion's commit path and read back by the workers.
 * An event larger than this alone still makes a job of its own.
 */
export const MAX_JOB_BYTES = 1_000_000;
/**
 * Most bytes of one event in a job. Capture bounds the event itself (1,000,000 bytes by default);
 * its person's properties are not bounded, and past this they are left out of the job's copy.
 */
export const MAX_EVENT_JOB_BYTES = 2_000_000;

export interface BatchJobData {
  events: DestinationEvent[];
}

/**
 * The batch jobs of a hand-off: events in order, at most MAX_EVENTS_PER_JOB and MAX_JOB_BYTES a
 * job. `onPersonLeftOut` is told of each event whose person properties were left out.
 */
export function toBatchJobs(
  events: readonly DestinationEvent[],
  onPersonLeftOut: (event: DestinationEvent, bytes: number) => void = () => undefined,
): BatchJobData[] {
  const jobs: BatchJobData[] = [];
  let current: DestinationEvent[] = [];
  let currentBytes = 0;
  for (const original of events) {
    let event = original;
    let bytes = jsonBytes(event);
    if (bytes > MAX_EVENT_JOB_BYTES) {
      onPersonLeftOut(event, bytes);
      event = { ...event, person: { ...event.person, properties: {} } };
      bytes = jsonBytes(event);
    }
    if (
      current.length >= MAX_EVENTS_PER_JOB ||
      (current.length > 0 && currentBytes + bytes > MAX_JOB_BYTES)
    ) {
      jobs.push({ events: current });
      current = [];
      currentBytes = 0;
    }
    current.push(event);
    currentBytes += bytes;
  }
  if (current.length > 0) jobs.push({ events: current });
  return jobs;
}

function jsonBytes(event: DestinationEvent): number {
  return Buffer.byteLength(JSON.stringify(event));
}
