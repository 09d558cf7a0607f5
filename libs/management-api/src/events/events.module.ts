import { Module } from '@nestjs/common';
import { EventPersonsRepository } from './event-persons.repository';
import { EventStore } from './event-store.service';
import { EventController } from './event.controller';
import { EventService } from './event.service';

@Module({
  controllers: [EventController],
  providers: [EventStore, EventPersonsRepository, EventService],
  exports: [EventStore],
})
export class EventsModule {}
