// @ts-check
// Appends each Jest run's totals to $TEST_SUMMARY_FILE (one JSON line per project), so that
// `npm test` can close with one line of totals across every project nx ran.
const { appendFileSync } = require('node:fs');

/** @implements {Pick<import('@jest/reporters').Reporter, 'onRunComplete'>} */
class SummaryReporter {
  /** @param {import('@jest/types').Config.GlobalConfig} globalConfig */
  constructor(globalConfig) {
    this.globalConfig = globalConfig;
  }

  /**
   * @param {Set<import('@jest/reporters').TestContext>} _contexts
   * @param {import('@jest/reporters').AggregatedResult} results
   */
  onRunComplete(_contexts, results) {
    const file = process.env.TEST_SUMMARY_FILE;
    if (!file) return;
    const line = {
      project: this.globalConfig.rootDir,
      passed: results.numPassedTests,
      failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
      skipped: results.numPendingTests + results.numTodoTests,
    };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  }
}

module.exports = SummaryReporter;
