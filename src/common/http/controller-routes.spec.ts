import { Controller, Delete, Get, Post, RequestMethod } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { ApiExcludeController } from '@nestjs/swagger';
import { controllerRoutes } from './controller-routes';

@Controller('things')
class ThingsController {
  @Get()
  list(): void {}

  @Delete(':id')
  remove(): void {}

  /** Not a route: no path. */
  helper(): void {}
}

@ApiExcludeController()
@Controller()
class HiddenController {
  @Post(['a', '/b/'])
  both(): void {}
}

describe(controllerRoutes.name, () => {
  it('finds every route of every controller, hidden ones included, and nothing else', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DiscoveryModule],
      controllers: [ThingsController, HiddenController],
    }).compile();
    const routes = controllerRoutes(moduleRef.get(DiscoveryService), moduleRef.get(MetadataScanner));
    expect(routes.map(({ method, path, controller, name }) => ({ method, path, controller, name }))).toEqual([
      { method: RequestMethod.GET, path: '/things', controller: ThingsController, name: 'ThingsController.list' },
      {
        method: RequestMethod.DELETE,
        path: '/things/:id',
        controller: ThingsController,
        name: 'ThingsController.remove',
      },
      { method: RequestMethod.POST, path: '/a', controller: HiddenController, name: 'HiddenController.both' },
      { method: RequestMethod.POST, path: '/b', controller: HiddenController, name: 'HiddenController.both' },
    ]);
    expect(routes[0].handler).toBe(ThingsController.prototype.list);
  });
});
