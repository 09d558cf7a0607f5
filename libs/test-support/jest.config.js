module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'test-support',
  rootDir: __dirname,
};
