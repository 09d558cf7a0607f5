export * from './service.types';
export * from './readiness.util';
export * from './probe-response';
export * from './probe.server';
export * from './metrics-access.util';
