module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'hogql',
  rootDir: __dirname,
};
