module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'management',
  rootDir: __dirname,
};
