export * from './captured-event';
