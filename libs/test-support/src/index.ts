export * from './dns-test-server.util';
export * from './smtp-test-server.util';
export * from './test-database.util';
export * from './patterns';
export * from './run-process.util';
export * from './listening-ports.util';
export * from './deadline.util';
export * from './as-nobody.util';
export * from './app-process.util';
export * from './split-env.util';
export * from './s3-test.util';
export * from './app-archive-server.util';
export * from './pipeline-app-rows.util';
export * from './openapi-response-check.util';
export {
  registerOpenApiDocument,
  registerOpenApiDocumentFrom,
  registerOpenApiDocumentOnce,
  unregisterOpenApiDocument,
} from './openapi-response-registry.util';
