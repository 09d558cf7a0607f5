import { Controller, Get, Module, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Access } from '../auth/access.decorator';
import { assertEveryRouteDeclaresAccess, routeTable } from './route-table';

@Controller('api/things')
class ThingController {
  @Get(':id')
  @Access({ scope: 'organization:read', organizationParam: 'id' })
  retrieve() {
    return {};
  }

  @Post()
  create() {
    return {};
  }
}

@Module({ controllers: [ThingController] })
class ThingModule {}

describe('routeTable', () => {
  it('lists every route with its access rule, and refuses a route without one', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [ThingModule] }).compile();
    expect(
      routeTable(moduleRef).map(({ method, path, rule }) => ({ method, path, scope: rule?.scope })),
    ).toEqual([
      { method: 'POST', path: '/api/things', scope: undefined },
      { method: 'GET', path: '/api/things/:id', scope: 'organization:read' },
    ]);
    expect(() => assertEveryRouteDeclaresAccess(moduleRef)).toThrow(
      'POST /api/things (ThingController.create)',
    );
  });
});
