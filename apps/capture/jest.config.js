module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'capture',
  rootDir: __dirname,
};
