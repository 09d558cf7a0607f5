// `npm run test:deploy`'s container tests: the image run by podman against the machine's engines.
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'deploy',
  rootDir: __dirname,
  testMatch: ['**/*.deploy-spec.ts'],
  testTimeout: 15 * 60_000,
  maxWorkers: 1,
};
