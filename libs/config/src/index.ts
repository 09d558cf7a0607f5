export * from './env.util';
export * from './management.config';
export * from './standalone.config';
