module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'capture-core',
  rootDir: __dirname,
};
