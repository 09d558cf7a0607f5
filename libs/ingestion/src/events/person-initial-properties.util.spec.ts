import { addInitialPersonProperties } from './person-initial-properties.util';

describe('addInitialPersonProperties', () => {
  it('copies known properties to $set and their first value to $set_once as $initial_', () => {
    const properties: Record<string, unknown> = {
      $browser: 'Chrome',
      utm_source: 'newsletter',
      gclid: 'g-1',
      custom: 'not copied',
    };
    addInitialPersonProperties('$pageview', properties);
    expect(properties.$set).toEqual({ $browser: 'Chrome', utm_source: 'newsletter', gclid: 'g-1' });
    expect(properties.$set_once).toEqual({
      $initial_browser: 'Chrome',
      $initial_utm_source: 'newsletter',
      $initial_gclid: 'g-1',
    });
  });

  it('keeps explicit $set and $set_once values', () => {
    const properties: Record<string, unknown> = {
      $browser: 'Chrome',
      $set: { $browser: 'Mine' },
      $set_once: { $initial_browser: 'First' },
    };
    addInitialPersonProperties('$pageview', properties);
    expect(properties.$set).toEqual({ $browser: 'Mine' });
    expect(properties.$set_once).toEqual({ $initial_browser: 'First' });
  });

  it('never writes a null first touch, but keeps a null latest value', () => {
    const properties: Record<string, unknown> = { utm_source: null };
    addInitialPersonProperties('$pageview', properties);
    expect(properties.$set).toEqual({ utm_source: null });
    expect(properties.$set_once).toEqual({});
  });

  it('uses $os_name as a fallback for $initial_os and never as a person property', () => {
    const properties: Record<string, unknown> = { $os_name: 'iOS' };
    addInitialPersonProperties('$screen', properties);
    expect(properties.$set).toEqual({});
    expect(properties.$set_once).toEqual({ $initial_os: 'iOS' });

    const both: Record<string, unknown> = { $os: 'Android', $os_name: 'iOS' };
    addInitialPersonProperties('$screen', both);
    expect(both.$set).toEqual({ $os: 'Android' });
    expect(both.$set_once).toEqual({ $initial_os: 'Android' });
  });

  it('skips a server SDK’s host operating system', () => {
    const properties: Record<string, unknown> = {
      $is_server: true,
      $os: 'Linux',
      $os_version: '6.1',
      utm_medium: 'x',
    };
    addInitialPersonProperties('purchase', properties);
    expect(properties.$set).toEqual({ utm_medium: 'x' });
  });

  it('leaves events without such properties, and $snapshot events, untouched', () => {
    const plain: Record<string, unknown> = { a: 1 };
    addInitialPersonProperties('x', plain);
    expect(plain).toEqual({ a: 1 });
    const snapshot: Record<string, unknown> = { $current_url: '/' };
    addInitialPersonProperties('$snapshot', snapshot);
    expect(snapshot).toEqual({ $current_url: '/' });
  });
});
