import type { DestinationEvent } from './app-destinations.service';

export const MAX_EVENTS_PER_JOB = 500;
/** Jobs are rows of the job engine's Postgres, written in ingestion's commit path; a larger event is a job alone. */
export const MAX_JOB_BYTES = 1_000_000;
/** Capture bounds the event, not its person's properties: past this they are left out of the job's copy. */
export const MAX_EVENT_JOB_BYTES = 2_000_000;

export interface BatchJobData {
  events: DestinationEvent[];
}

/** Events in order. */
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
