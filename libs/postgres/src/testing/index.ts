export * from './migrated-test-database.util';
