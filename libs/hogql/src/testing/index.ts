// Test-only helpers other projects' tests use: `@hogbase/hogql/testing`.
export * from './expression-generator';
