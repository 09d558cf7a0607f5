module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'postgres',
  rootDir: __dirname,
};
