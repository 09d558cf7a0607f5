import { Controller, Delete, Get, HttpStatus, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  ApiProperty,
  DocumentBuilder,
  SwaggerModule,
  type OpenAPIObject,
  type SchemaObject,
} from '@nestjs/swagger';
import {
  ApiCursorPage,
  ApiEmptyResponse,
  ApiErrorResponse,
  ApiModel,
  ApiModelResponse,
  ApiNoContent,
  ApiPage,
} from './api-responses.decorator';

@ApiModel('Thing')
class ThingResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;
}

@ApiModel('ThingRows')
class ThingRowsResponse {
  @ApiProperty({ type: [String] })
  columns!: string[];
}

@Controller('things')
class ThingController {
  @Get()
  @ApiPage(ThingResponse)
  list() {}

  @Get('runs')
  @ApiCursorPage(ThingResponse, { previous: true })
  runs() {}

  @Get('events')
  @ApiCursorPage(ThingResponse, { previous: false, csv: true })
  events() {}

  @Get('rows')
  @ApiCursorPage(ThingResponse, { previous: false, csv: true, alternatives: [ThingRowsResponse] })
  rows() {}

  @Get('either')
  @ApiModelResponse(ThingResponse, HttpStatus.OK, { alternatives: [ThingRowsResponse] })
  either() {}

  @Get('all')
  @ApiModelResponse(ThingResponse, HttpStatus.OK, { isArray: true })
  all() {}

  @Delete(':id')
  @ApiNoContent()
  remove() {}

  @Delete('flags/:id')
  @ApiEmptyResponse(HttpStatus.METHOD_NOT_ALLOWED, 'Refused')
  refuse() {}

  @Get('mine')
  @ApiErrorResponse(HttpStatus.NOT_FOUND, 'No current organization')
  mine() {}
}

describe('response decorators', () => {
  let app: INestApplication;
  let document: OpenAPIObject;

  beforeAll(async () => {
    const module = await Test.createTestingModule({ controllers: [ThingController] }).compile();
    app = module.createNestApplication({ logger: false });
    document = SwaggerModule.createDocument(app, new DocumentBuilder().build());
  });

  afterAll(async () => {
    await app.close();
  });

  const schemas = () => document.components!.schemas! as Record<string, SchemaObject>;

  it('documents a limit/offset page as a named envelope with its two query parameters', () => {
    const list = document.paths['/things'].get!;
    expect(list.responses[200]).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/PaginatedThingList' } } },
    });
    expect(list.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1 } }),
        expect.objectContaining({ name: 'offset', in: 'query', schema: { type: 'integer', minimum: 0 } }),
      ]),
    );
    expect(schemas().PaginatedThingList).toMatchObject({
      required: ['count', 'next', 'previous', 'results'],
      properties: {
        next: { type: 'string', nullable: true },
        results: { type: 'array', items: { $ref: '#/components/schemas/Thing' } },
      },
    });
  });

  it('documents cursor pages with or without previous, the event list also as CSV', () => {
    expect(Object.keys(schemas().CursorPaginatedThingList.properties!)).toEqual([
      'next',
      'results',
      'previous',
    ]);
    expect(Object.keys(schemas().NextPaginatedThingList.properties!)).toEqual(['next', 'results']);
    expect(document.paths['/things/events'].get!.responses[200]).toMatchObject({
      content: {
        'application/json': { schema: { $ref: '#/components/schemas/NextPaginatedThingList' } },
        'text/csv': { schema: { type: 'string' } },
      },
    });
    expect(document.paths['/things/runs'].get!.parameters).toEqual([
      expect.objectContaining({ name: 'cursor', in: 'query' }),
    ]);
  });

  it('documents a status answered in one of several shapes as a oneOf of their models', () => {
    const oneOf = [
      { $ref: '#/components/schemas/NextPaginatedThingList' },
      { $ref: '#/components/schemas/ThingRows' },
    ];
    expect(document.paths['/things/rows'].get!.responses[200]).toMatchObject({
      content: { 'application/json': { schema: { oneOf } }, 'text/csv': { schema: { type: 'string' } } },
    });
    expect(document.paths['/things/either'].get!.responses[200]).toEqual({
      description: 'OK',
      content: {
        'application/json': {
          schema: {
            oneOf: [{ $ref: '#/components/schemas/Thing' }, { $ref: '#/components/schemas/ThingRows' }],
          },
        },
      },
    });
    expect(schemas().ThingRows).toMatchObject({ properties: { columns: { type: 'array' } } });
  });

  it('documents a plain array, and answers without a body', () => {
    expect(document.paths['/things/all'].get!.responses[200]).toMatchObject({
      content: {
        'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Thing' } } },
      },
    });
    expect(document.paths['/things/{id}'].delete!.responses).toEqual({ 204: { description: 'Deleted' } });
    expect(document.paths['/things/flags/{id}'].delete!.responses).toEqual({
      405: { description: 'Refused' },
    });
  });

  it('documents an error status a route answers for its own reasons with the error body', () => {
    expect(document.paths['/things/mine'].get!.responses[404]).toEqual({
      description: 'No current organization',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    });
  });
});
