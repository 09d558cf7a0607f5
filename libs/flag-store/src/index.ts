export * from './flag-store';
