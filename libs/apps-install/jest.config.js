module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'apps-install',
  rootDir: __dirname,
};
