export * from './app-capture.publisher';
export * from './import-apps.service';
export * from './schedule.util';
