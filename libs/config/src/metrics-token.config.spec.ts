import { loadCaptureConfig } from './capture.config';
import { loadIngestionConfig } from './ingestion.config';
import { loadManagementConfig } from './management.config';
import { readMetricsToken } from './metrics-token.config';
import { loadWorkersConfig } from './workers.config';

describe('METRICS_TOKEN', () => {
  const token = 'a-long-enough-metrics-token';

  it('is read alike by every app, and absent when unset or blank', () => {
    const env = { METRICS_TOKEN: token };
    expect([
      loadCaptureConfig(env).metricsToken,
      loadIngestionConfig(env).metricsToken,
      loadWorkersConfig(env).metricsToken,
      loadManagementConfig(env).metricsToken,
    ]).toEqual([token, token, token, token]);
    expect(readMetricsToken({})).toBeUndefined();
    expect(readMetricsToken({ METRICS_TOKEN: '  ' })).toBeUndefined();
  });

  it('stops the app on a short token or one with spaces, without printing it', () => {
    for (const bad of ['short', 'has a space in the middle']) {
      expect(() => readMetricsToken({ METRICS_TOKEN: bad })).toThrow(
        'METRICS_TOKEN=***: must be at least 16 characters, without spaces',
      );
    }
  });
});
