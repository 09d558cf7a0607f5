export { createMigratedTestDatabase, type MigratedTestDatabase } from './migrated-test-database.util';
