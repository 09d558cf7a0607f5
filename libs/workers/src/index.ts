export * from './run-query';
