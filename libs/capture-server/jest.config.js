module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'capture-server',
  rootDir: __dirname,
};
