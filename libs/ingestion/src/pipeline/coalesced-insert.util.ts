import { rowContentErrorName } from '@hogbase/clickhouse';

interface WaitingWrite<Row> {
  rows: readonly Row[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Shares one INSERT between the handler calls writing at the same time: each part has a fixed cost.
 * A lone write leaves at once; `write` resolves once its own rows are stored. A shared insert refused
 * for a row's content is retried write by write, so only the write holding the row fails with it.
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

  /** As many as fit in maxRows, always at least one. */
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
