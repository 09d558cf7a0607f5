module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'flag-store',
  rootDir: __dirname,
};
