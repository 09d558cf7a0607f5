module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'management',
  rootDir: __dirname,
  // Every answer an e2e suite receives is checked against the OpenAPI document of the host (issue 29).
  setupFilesAfterEnv: ['<rootDir>/../../libs/test-support/src/openapi-response-check.setup.ts'],
};
