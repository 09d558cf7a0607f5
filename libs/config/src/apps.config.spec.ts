import { loadAppsRuntimeConfig } from './apps.config';
import { ConfigError } from './env.util';

const MB = 1024 * 1024;

describe('apps runtime config', () => {
  it('bounds apps by default in threads, CPU, sandboxes, cache and storage', () => {
    expect(loadAppsRuntimeConfig({})).toMatchObject({
      memoryLimitBytes: 64 * MB,
      timeLimitMs: 30_000,
      callCpuMs: 1_000,
      threads: 2,
      sandboxesMemoryBytes: 512 * MB,
      timeoutBackoffMs: 10_000,
      timeoutsBeforeDisable: 5,
      cacheBytesPerApp: 8 * MB,
      cacheBytes: 64 * MB,
      storageBytesPerConfig: 10 * MB,
      storageValueMaxBytes: 1024 * 1024,
    });
  });

  it.each([
    [{ APPS_THREADS: '0' }, 'APPS_THREADS=0: must be an integer >= 1'],
    [{ APPS_CALL_CPU_MS: 'fast' }, 'APPS_CALL_CPU_MS=fast: must be an integer >= 10'],
    [
      { APPS_MEMORY_LIMIT_MB: '128', APPS_SANDBOXES_MEMORY_MB: '64' },
      'APPS_SANDBOXES_MEMORY_MB=64: must be at least APPS_MEMORY_LIMIT_MB (128): it holds every sandbox',
    ],
    [{ APPS_CACHE_MB_PER_APP: '100' }, 'APPS_CACHE_MB_PER_APP=100: must not exceed APPS_CACHE_MB (64)'],
    [
      { APPS_STORAGE_MB_PER_CONFIG: '1', APPS_STORAGE_VALUE_MAX_KB: '2048' },
      'APPS_STORAGE_VALUE_MAX_KB=2048: must not exceed APPS_STORAGE_MB_PER_CONFIG (1 MB)',
    ],
  ])('refuses %j at start-up', (env, message) => {
    expect(() => loadAppsRuntimeConfig(env)).toThrow(ConfigError);
    expect(() => loadAppsRuntimeConfig(env)).toThrow(message);
  });
});
