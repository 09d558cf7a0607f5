// The fault suite (`npm run test:faults`): one file at a time, each with its own deployment.
module.exports = {
  ...require('../jest.preset.js'),
  displayName: 'faults',
  rootDir: __dirname,
  testMatch: ['**/*.fault-spec.ts'],
  testTimeout: 15 * 60_000,
  maxWorkers: 1,
};
