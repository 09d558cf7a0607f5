import { rowContentErrorName } from '@hogbase/clickhouse';

interface WaitingWrite<Row> {
  rows: readonly Row[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Shares one INSERT between the handler calls that write at the same time (the partitions consumed
 * concurrently), so ClickHouse gets fewer, larger parts: each insert (a part, and its share of
 * the merges) has a fixed cost beside the cost of its rows (bench/README.md has the figures).
 *
 * One insert runs at a time. A write that arrives while it runs waits and goes with every other
 * waiting write in the next one (up to `maxRows`); a write that finds nothing running leaves at
 * once, so a lone batch never lingers. `write` resolves once its own rows are written, so a caller
 * commits its offsets only after its rows are stored.
 *
 * When a shared insert is refused for a row's content (rowContentErrorName), the rows are not
 * attributed: every write in it is tried again alone, so only the write that holds the refused
 * row fails with that error (its caller isolates the row). Any other failure fails every write in
 * the insert, and each caller retries its own batch.
 */
export class CoalescedInsert<Row> {
  private readonly waiting: WaitingWrite<Row>[] = [];
  private running = false;

  constructor(
    private readonly insert: (rows: readonly Row[]) => Promise<void>,
    private readonly maxRows = 20_000,
  ) {}

  write(rows: readonly Row[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ rows, resolve, reject });
      if (!this.running) void this.run();
    });
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.waiting.length > 0) await this.flush(this.takeGroup());
    } finally {
      this.running = false;
    }
  }

  /** The oldest waiting writes, as many as fit in maxRows (always at least one). */
  private takeGroup(): WaitingWrite<Row>[] {
    let count = 1;
    let rows = this.waiting[0].rows.length;
    while (count < this.waiting.length && rows + this.waiting[count].rows.length <= this.maxRows) {
      rows += this.waiting[count].rows.length;
      count++;
    }
    return this.waiting.splice(0, count);
  }

  private async flush(group: WaitingWrite<Row>[]): Promise<void> {
    if (group.length === 1) return this.flushAlone(group[0]);
    try {
      await this.insert(group.flatMap(({ rows }) => rows));
    } catch (error) {
      if (rowContentErrorName(error) === undefined) {
        for (const waiting of group) waiting.reject(error);
        return;
      }
      for (const waiting of group) await this.flushAlone(waiting);
      return;
    }
    for (const waiting of group) waiting.resolve();
  }

  private async flushAlone(waiting: WaitingWrite<Row>): Promise<void> {
    try {
      await this.insert(waiting.rows);
      waiting.resolve();
    } catch (error) {
      waiting.reject(error);
    }
  }
}
