export { startIngestionService, type IngestionEngines } from './service/ingestion.service';
export {
  createDeadLetterPublisher,
  createIngestionConsumer,
  createIngestionPool,
  INGESTION_TOPICS,
  ingestionConsumerOptions,
  openIngestionEngines,
} from './service/ingestion-engines.util';
export { prepareEventStores } from './service/event-stores.util';
