export * from './intervals';
export * from './destination.types';
export * from './destination-registry';
export * from './destination-secrets';
export { createNoOpDestination, NoOpDestinationWriter } from './destinations/noop.destination';
