import {
  capabilitiesProblem,
  configSchemaProblem,
  metricsProblem,
  publicJobsProblem,
} from './plugin-fields.validator';

describe('the shapes of an app body', () => {
  it('accepts what the installer records for an app', () => {
    expect(
      capabilitiesProblem({
        methods: ['setupPlugin', 'onEvent', 'composeWebhook', 'processEvent'],
        jobs: ['resend'],
        scheduled_tasks: ['runEveryHour'],
      }),
    ).toBeNull();
    expect(capabilitiesProblem({})).toBeNull();
    expect(metricsProblem({ delivered: 'sum', slowest: 'max', fastest: 'min' })).toBeNull();
    expect(publicJobsProblem({ resend: { payload: { since: { type: 'date' } } } })).toBeNull();
    expect(
      configSchemaProblem([
        { markdown: '## Where events go' },
        { key: 'url', name: 'URL', type: 'string', required: true },
        { key: 'method', type: 'choice', choices: ['POST', 'PUT'] },
      ]),
    ).toBeNull();
  });

  it.each([
    ['a list', ['onEvent'], 'Expected a dictionary of items.'],
    ['an unknown key', { powers: [] }, '"powers" is not a capability'],
    ['methods that are not a list', { methods: 'onEvent' }, '"methods" must be a list of names.'],
    ['a method no app exports', { methods: ['eval'] }, '"eval" is not one of the methods'],
    ['a scheduled task among methods', { methods: ['runEveryMinute'] }, '"runEveryMinute" is not one of'],
    ['an empty job name', { jobs: [''] }, 'Job names have 1 to 200 characters.'],
    ['too many jobs', { jobs: Array.from({ length: 101 }, (_, index) => `job${index}`) }, 'at most 100'],
  ])('refuses capabilities with %s', (_case, value, message) => {
    expect(capabilitiesProblem(value)).toContain(message);
  });

  it('refuses metrics that are not sum, max or min, and public jobs that are not objects', () => {
    expect(metricsProblem({ delivered: 'avg' })).toBe('Metric "delivered" must be one of sum, max, min.');
    expect(metricsProblem(null)).toBe('Expected a dictionary of items.');
    expect(publicJobsProblem({ resend: true })).toBe('Public job "resend" must be an object.');
  });

  it('refuses config fields the installer would refuse in plugin.json', () => {
    expect(configSchemaProblem({ url: {} })).toBe('Expected a list of items.');
    expect(configSchemaProblem(['url'])).toBe('Config field 1 must be an object.');
    expect(configSchemaProblem([{ name: 'URL' }])).toBe('Config field 1 has no "key".');
    expect(configSchemaProblem([{ key: 'url', type: 'url' }])).toContain('"type" must be one of');
    expect(configSchemaProblem([{ key: 'm', choices: [1] }])).toContain(
      '"choices" must be a list of strings',
    );
  });
});
