module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'event-contract',
  rootDir: __dirname,
};
