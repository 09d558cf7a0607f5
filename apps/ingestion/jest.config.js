module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'ingestion-app',
  rootDir: __dirname,
};
