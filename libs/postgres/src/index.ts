export * from './data-source';
export * from './entities';
export * from './migrations';
export * from './tokens.util';
export * from './embedded-postgres';
