import { Module } from '@nestjs/common';
import { UserController } from './user.controller';

/** The user and personal API key repositories come from AuthModule (see there why). */
@Module({ controllers: [UserController] })
export class UsersModule {}
