module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'clickhouse',
  rootDir: __dirname,
};
