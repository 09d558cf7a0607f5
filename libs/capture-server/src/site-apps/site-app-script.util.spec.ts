import { siteAppHash, siteConfigFromSchema } from './site-app-script.util';

describe('siteConfigFromSchema', () => {
  it('keeps the site fields, with their default when no value was set and null when there is neither', () => {
    const schema = [
      { key: 'greeting', site: true },
      { key: 'colour', site: true, default: 'blue' },
      { key: 'size', site: true },
      { key: 'internal' },
    ];
    expect(siteConfigFromSchema(schema, { greeting: 'hi', internal: 'x' })).toEqual({
      greeting: 'hi',
      colour: 'blue',
      size: null,
    });
  });

  it('keeps a value set to null rather than the default, as PostHog does', () => {
    expect(siteConfigFromSchema([{ key: 'colour', site: true, default: 'blue' }], { colour: null })).toEqual({
      colour: null,
    });
  });

  it('leaves out secret fields and values still sealed', () => {
    const schema = [
      { key: 'apiKey', site: true, secret: true },
      { key: 'formerlySecret', site: true },
    ];
    expect(
      siteConfigFromSchema(schema, { apiKey: 'clear by mistake', formerlySecret: { sealed: 'v1:abc' } }),
    ).toEqual({});
  });

  it('answers nothing for a schema that is not a list of fields', () => {
    expect(siteConfigFromSchema({ greeting: { site: true } }, { greeting: 'hi' })).toEqual({});
    expect(siteConfigFromSchema([null, 'greeting', { site: true }], { greeting: 'hi' })).toEqual({});
  });
});

describe('siteAppHash', () => {
  it('changes with the code and with the config, and only with them', () => {
    const app = { id: 1, webToken: 't', transpiled: '(function(){})', config: { greeting: 'hi' } };
    expect(siteAppHash({ ...app })).toBe(siteAppHash(app));
    expect(siteAppHash({ ...app, webToken: 'rotated' })).toBe(siteAppHash(app));
    expect(siteAppHash({ ...app, config: { greeting: 'bonjour' } })).not.toBe(siteAppHash(app));
    expect(siteAppHash({ ...app, transpiled: '(function(){ })' })).not.toBe(siteAppHash(app));
  });
});
