import type { DestinationEvent } from './app-destinations.service';
import { MAX_EVENT_JOB_BYTES, MAX_EVENTS_PER_JOB, MAX_JOB_BYTES, toBatchJobs } from './destination-jobs.util';

function event(index: number, propertyBytes = 0, personBytes = 0): DestinationEvent {
  return {
    uuid: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
    event: 'order placed',
    team_id: 1,
    distinct_id: 'user-1',
    properties: { index, text: 'x'.repeat(propertyBytes) },
    timestamp: '2026-01-01T00:00:00.000Z',
    elements_chain: '',
    person: {
      uuid: 'person',
      properties: { text: 'y'.repeat(personBytes) },
      created_at: '2026-01-01T00:00:00.000Z',
    },
  };
}

const jobBytes = (events: DestinationEvent[]) =>
  events.reduce((sum, one) => sum + JSON.stringify(one).length, 0);
const indexes = (events: DestinationEvent[]) => events.map((one) => one.properties.index);

describe('toBatchJobs', () => {
  it('splits by bytes as well as by count, keeping the events in order', () => {
    // 300 events of ~100 KB: 30 MB, which the count alone (500) would have put in one row.
    const large = Array.from({ length: 300 }, (_, index) => event(index, 100_000));
    const jobs = toBatchJobs(large);
    expect(jobs.length).toBeGreaterThanOrEqual(30);
    for (const job of jobs) expect(jobBytes(job.events)).toBeLessThanOrEqual(MAX_JOB_BYTES);
    expect(jobs.flatMap((job) => indexes(job.events))).toEqual(indexes(large));

    const small = Array.from({ length: 1_200 }, (_, index) => event(index));
    expect(toBatchJobs(small).map((job) => job.events.length)).toEqual([
      MAX_EVENTS_PER_JOB,
      MAX_EVENTS_PER_JOB,
      200,
    ]);
  });

  it('gives an event past the job budget a job of its own', () => {
    const jobs = toBatchJobs([event(0), event(1, 1_200_000), event(2)]);
    expect(jobs.map((job) => indexes(job.events))).toEqual([[0], [1], [2]]);
  });

  it("leaves the person's properties out of an event that would make a huge row, and says so", () => {
    const leftOut: string[] = [];
    const huge = event(0, 10, 5_000_000);
    const [job] = toBatchJobs([huge], (one) => leftOut.push(one.uuid));
    expect(leftOut).toEqual([huge.uuid]);
    expect(job.events[0]).toEqual({ ...huge, person: { ...huge.person, properties: {} } });
    expect(jobBytes(job.events)).toBeLessThanOrEqual(MAX_EVENT_JOB_BYTES);
  });
});
