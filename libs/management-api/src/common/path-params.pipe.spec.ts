import {
  type ArgumentsHost,
  Body,
  Catch,
  Controller,
  type ExceptionFilter,
  Get,
  type INestApplication,
  Patch,
} from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { SwaggerModule, DocumentBuilder } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import { IsString } from 'class-validator';
import type { Response } from 'express';
import { parsePluginId } from '../plugins/plugin-id.pipe';
import { ApiError } from './api.error';
import {
  IntegerIdOrNullParam,
  IntegerIdParam,
  parseIntegerId,
  parseUuid,
  UuidOrNullParam,
  UuidParam,
} from './path-params.pipe';
import { ApiValidationPipe } from './validation.pipe';

class RenameDto {
  @IsString()
  name!: string;
}

@Controller('things')
class ThingController {
  @Get(':id')
  one(@IntegerIdParam('id') id: number): { id: number } {
    return { id };
  }

  @Patch(':id')
  rename(@IntegerIdOrNullParam('id') id: number | null, @Body() dto: RenameDto): { id: number | null } {
    return { id: dto.name ? id : null };
  }

  @Get('by-uuid/:id')
  byUuid(@UuidParam('id') id: string): { id: string } {
    return { id };
  }

  @Patch('by-uuid/:id')
  renameByUuid(@UuidOrNullParam('id') id: string | null, @Body() dto: RenameDto): { id: string | null } {
    return { id: dto.name ? id : null };
  }
}

@Catch(ApiError)
class ApiErrorFilter implements ExceptionFilter {
  catch(error: ApiError, host: ArgumentsHost): void {
    host.switchToHttp().getResponse<Response>().status(error.status).json(error.body);
  }
}

describe('path id parameters', () => {
  let app: INestApplication;
  let baseUrl: string;

  beforeAll(async () => {
    const module = await Test.createTestingModule({
      controllers: [ThingController],
      // The app's global validation pipe: it converts parameters declared `number`.
      providers: [
        { provide: APP_PIPE, useClass: ApiValidationPipe },
        { provide: APP_FILTER, useClass: ApiErrorFilter },
      ],
    }).compile();
    app = module.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    baseUrl = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await app?.close();
  });

  const request = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer: unknown = await response.json();
    return { status: response.status, body: answer };
  };

  it('reads the id as the path wrote it, so 1e0, 0x1, +1 and 1.0 name no row though the handler takes a number', async () => {
    expect(await request('GET', '/things/7')).toEqual({ status: 200, body: { id: 7 } });
    for (const id of ['1e0', '0x1', '+1', '1.0', '2147483648', 'abc']) {
      expect(await request('GET', `/things/${id}`)).toMatchObject({
        status: 404,
        body: { code: 'not_found' },
      });
    }
  });

  it('passes a malformed id on as null on the OrNull routes, so the body is validated first', async () => {
    expect((await request('PATCH', '/things/1e0', { name: 5 })).status).toBe(400);
    expect(await request('PATCH', '/things/1e0', { name: 'x' })).toEqual({ status: 200, body: { id: null } });
    expect(await request('PATCH', '/things/12', { name: 'x' })).toEqual({ status: 200, body: { id: 12 } });
    expect((await request('PATCH', '/things/by-uuid/abc', { name: 5 })).status).toBe(400);
    expect(await request('PATCH', '/things/by-uuid/abc', { name: 'x' })).toEqual({
      status: 200,
      body: { id: null },
    });
    expect((await request('GET', '/things/by-uuid/abc')).status).toBe(404);
  });

  it('documents each id as the string the path holds, in the shape Nest gives a string parameter', () => {
    const document = SwaggerModule.createDocument(app, new DocumentBuilder().build());
    const expected = JSON.stringify([{ name: 'id', required: true, in: 'path', schema: { type: 'string' } }]);
    for (const [path, method] of [
      ['/things/{id}', 'get'],
      ['/things/{id}', 'patch'],
      ['/things/by-uuid/{id}', 'get'],
      ['/things/by-uuid/{id}', 'patch'],
    ] as const) {
      const parameters = document.paths[path][method]?.parameters?.filter(
        (parameter) => 'in' in parameter && parameter.in === 'path',
      );
      expect(JSON.stringify(parameters)).toBe(expected);
    }
  });

  it('parses integer ids in Postgres range and UUIDs, and app ids from 1', () => {
    expect(parseIntegerId('0')).toBe(0);
    expect(parseIntegerId('2147483647')).toBe(2147483647);
    expect(parseIntegerId('2147483648')).toBeNull();
    expect(parseIntegerId('')).toBeNull();
    expect(parseIntegerId('-1')).toBeNull();
    expect(parseUuid('00000000-0000-0000-0000-000000000000')).toBe('00000000-0000-0000-0000-000000000000');
    expect(parseUuid('00000000-0000-0000-0000-00000000000g')).toBeNull();
    expect(parsePluginId('0')).toBeNull();
    expect(parsePluginId(12)).toBe(12);
  });
});
