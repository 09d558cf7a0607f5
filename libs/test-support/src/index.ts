export * from './dns-test-server.util';
export * from './smtp-test-server.util';
export * from './test-database.util';
