export * from './env.util';
export * from './management.config';
