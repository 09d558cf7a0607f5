module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'batch-exports',
  rootDir: __dirname,
};
