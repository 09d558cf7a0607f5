module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'apps-runtime',
  rootDir: __dirname,
};
