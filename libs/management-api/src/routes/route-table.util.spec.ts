import { Controller, Get, Module, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Access } from '../auth/access.decorator';
import { projectScoped } from './project-scoped-paths.util';
import { assertEveryRouteDeclaresAccess, routeTable } from './route-table.util';

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

@Controller(projectScoped('widgets'))
class WidgetController {
  @Get()
  @Access({ scope: 'project:read', projectParam: 'project_id' })
  list() {
    return [];
  }
}

@Module({ controllers: [ThingController] })
class ThingModule {}

@Module({ controllers: [WidgetController] })
class WidgetModule {}

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

  it('lists a project-scoped route under both prefixes, with the rule naming the parameter of each', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [WidgetModule] }).compile();
    expect(
      routeTable(moduleRef).map(({ path, rule }) => ({ path, projectParam: rule?.projectParam })),
    ).toEqual([
      { path: '/api/environments/:environment_id/widgets', projectParam: 'environment_id' },
      { path: '/api/projects/:project_id/widgets', projectParam: 'project_id' },
    ]);
  });
});
