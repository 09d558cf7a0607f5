export * from './intervals';
export * from './destination.types';
