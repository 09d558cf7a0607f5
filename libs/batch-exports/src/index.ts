export * from './intervals';
export * from './destination.types';
export * from './destination-registry';
export { createNoOpDestination, NoOpDestinationWriter } from './destinations/noop.destination';
