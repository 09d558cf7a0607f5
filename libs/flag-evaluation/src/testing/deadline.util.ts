import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { FlagProperty, Properties } from '../flag-definition.types';

export interface MatchCase {
  filter: FlagProperty;
  properties: Properties;
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
require(workerData.register);
const { matchProperty } = require(workerData.module);
const options = { timezone: 'UTC', now: new Date('2026-03-15T12:00:00Z') };
parentPort.postMessage(workerData.cases.map((c) => matchProperty(c.filter, c.properties, options)));
`;

/**
 * `matchProperty` in a worker stopped at the deadline: a backtracking regex would hang Jest, whose
 * timeout cannot interrupt synchronous code. `module`: the property-matching source (this tree's).
 */
export function matchWithDeadline(
  cases: MatchCase[],
  deadlineMs: number,
  module = path.join(__dirname, '..', 'property-matching.util.ts'),
): Promise<boolean[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { cases, module, register: require.resolve('@swc-node/register') },
    });
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new Error(`${cases.length} property matches did not answer within ${deadlineMs} ms`));
    }, deadlineMs);
    worker.once('message', (results: boolean[]) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve(results);
    });
    worker.once('error', (error: Error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
