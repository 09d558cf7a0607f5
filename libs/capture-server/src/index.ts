export * from './capture.app';
export * from './capture-metrics';
export * from './postgres-pool';
export * from './project-token.cache';
