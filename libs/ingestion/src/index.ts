export * from './persons/person-processor';
export * from './persons/person-processing.types';
export * from './persons/person-uuid.util';
export * from './persons/distinct-id.util';
export * from './events/parse-captured-event.util';
export { MAX_GROUP_TYPES_PER_TEAM } from './groups/group-types.util';
export * from './pipeline/event-batch.handler';
export * from './pipeline/event-row.mapper';
