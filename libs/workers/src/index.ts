export * from './run-query';
export * from './workers.service';
export * from './scheduler';
export * from './run-store';
export * from './run-executor';
export * from './workers-engines';
export * from './import-apps';
