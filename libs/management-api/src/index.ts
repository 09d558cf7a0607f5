export * from './management.app';
export * from './management.module';
export * from './management-config.token';
export * from './logging/pino-nest.logger';
export * from './bootstrap/bootstrap.service';
export * from './invites/invite.service';
export * from './auth/scopes';
export * from './common/api-error';
