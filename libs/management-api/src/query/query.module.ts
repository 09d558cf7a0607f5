import { Module } from '@nestjs/common';
import { QueryController } from './query.controller';
import { QueryStore } from './query-store.service';
import { QueryService } from './query.service';

@Module({
  controllers: [QueryController],
  providers: [QueryStore, QueryService],
})
export class QueryModule {}
