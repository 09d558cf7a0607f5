export * from './data-source';
export * from './entities';
export * from './migrations';
export * from './tokens.util';
export * from './embedded-postgres';
export * from './batch-export-backfill-status';
export * from './data-dir-lock';
export * from './data-dir-space';
