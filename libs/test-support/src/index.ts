export * from './dns-test-server.util';
export * from './smtp-test-server.util';
export * from './test-database.util';
export * from './patterns';
export * from './run-process.util';
export * from './listening-ports.util';
export * from './deadline.util';
export * from './as-nobody.util';
