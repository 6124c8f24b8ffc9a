import { Controller, Delete, Get, MiddlewareConsumer, RequestMethod } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { NextFunction, Request, Response } from 'express';
import { Deprecated } from './deprecated.decorator';
import { DeprecatedRoute, DeprecatedRoutes } from './deprecated-routes';

const NOTICE = { since: '2026-12-01', sunset: '2027-06-30', link: '/docs' };

@Controller('old')
class OldController {
  @Get()
  @Deprecated(NOTICE)
  list(): void {}

  @Delete(':id')
  @Deprecated({ since: '2027-01-01', sunset: '2027-01-01' })
  remove(): void {}

  @Get('current')
  current(): void {}
}

@Controller()
class RootController {
  @Get(['a', '/b/'])
  @Deprecated(NOTICE)
  both(): void {}
}

@Controller('current')
class CurrentController {
  @Get()
  current(): void {}
}

async function routesOf(...controllers: (new () => object)[]): Promise<DeprecatedRoutes> {
  const moduleRef = await Test.createTestingModule({
    imports: [DiscoveryModule],
    controllers,
    providers: [DeprecatedRoutes],
  }).compile();
  return moduleRef.get(DeprecatedRoutes);
}

describe(DeprecatedRoutes.name, () => {
  it("finds each deprecated handler's route, with its fields, and no other", async () => {
    const routes = await routesOf(OldController, RootController, CurrentController);
    expect(routes.find()).toEqual([
      {
        route: { path: '/old', method: RequestMethod.GET },
        fields: {
          Deprecation: '@1796083200',
          Sunset: 'Wed, 30 Jun 2027 00:00:00 GMT',
          Link: '</docs>; rel="deprecation"',
        },
      },
      {
        route: { path: '/old/:id', method: RequestMethod.DELETE },
        fields: { Deprecation: '@1798761600', Sunset: 'Fri, 01 Jan 2027 00:00:00 GMT' },
      },
      {
        route: { path: '/a', method: RequestMethod.GET },
        fields: expect.objectContaining({ Sunset: expect.any(String) }),
      },
      {
        route: { path: '/b', method: RequestMethod.GET },
        fields: expect.objectContaining({ Sunset: expect.any(String) }),
      },
    ]);
  });

  it('mounts one middleware per deprecated route, which sets its fields and goes on', async () => {
    const mounted: {
      middleware: (req: Request, res: Response, next: NextFunction) => void;
      route: DeprecatedRoute['route'];
    }[] = [];
    const consumer = {
      apply: (middleware: (req: Request, res: Response, next: NextFunction) => void) => ({
        forRoutes: (route: DeprecatedRoute['route']) => mounted.push({ middleware, route }),
      }),
    } as unknown as MiddlewareConsumer;
    (await routesOf(OldController)).apply(consumer);
    expect(mounted.map(({ route }) => route)).toEqual([
      { path: '/old', method: RequestMethod.GET },
      { path: '/old/:id', method: RequestMethod.DELETE },
    ]);

    const headers = new Map<string, string>();
    const res = { setHeader: (name: string, value: string) => headers.set(name, value) } as unknown as Response;
    const next = jest.fn();
    mounted[0].middleware({} as Request, res, next);
    expect(Object.fromEntries(headers)).toEqual({
      Deprecation: '@1796083200',
      Sunset: 'Wed, 30 Jun 2027 00:00:00 GMT',
      Link: '</docs>; rel="deprecation"',
    });
    expect(next).toHaveBeenCalledWith();
  });

  it('mounts nothing while no route is deprecated', async () => {
    const consumer = { apply: jest.fn() } as unknown as MiddlewareConsumer;
    (await routesOf(CurrentController)).apply(consumer);
    expect(consumer.apply).not.toHaveBeenCalled();
  });
});
