module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'flag-evaluation',
  rootDir: __dirname,
};
