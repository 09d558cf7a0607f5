import { Module } from '@nestjs/common';
import { QueryController } from './query.controller';
import { QueryCache } from './query-cache.store';
import { QueryStore } from './query-store.service';
import { QueryTasks } from './query-tasks.store';
import { QueryService } from './query.service';

@Module({
  controllers: [QueryController],
  providers: [QueryStore, QueryCache, QueryTasks, QueryService],
})
export class QueryModule {}
