module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'apps-sandbox',
  rootDir: __dirname,
};
