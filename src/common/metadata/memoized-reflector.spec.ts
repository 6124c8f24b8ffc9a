import { SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { MemoizedReflector } from './memoized-reflector';

const Role = Reflector.createDecorator<string>({ transform: (role) => role.toUpperCase() });

class Sample {
  @SetMetadata('public', true)
  @Role('admin')
  open(): void {}

  closed(): void {}
}

describe(MemoizedReflector.name, () => {
  let reflector: MemoizedReflector;
  let plain: Reflector;
  beforeEach(() => {
    reflector = new MemoizedReflector();
    plain = new Reflector();
  });
  afterEach(() => jest.restoreAllMocks());

  const open = Sample.prototype.open;
  const closed = Sample.prototype.closed;

  it("answers as Nest's Reflector does, for keys, decorators, absent metadata and several targets", () => {
    for (const target of [open, closed, Sample]) {
      expect(reflector.get('public', target)).toEqual(plain.get('public', target));
      expect(reflector.get(Role, target)).toEqual(plain.get(Role, target));
    }
    expect(reflector.get(Role, open)).toBe('ADMIN');
    expect(reflector.getAllAndOverride('public', [closed, open])).toBe(true);
    expect(reflector.getAllAndOverride('public', [closed, Sample])).toBeUndefined();
    expect(reflector.getAllAndMerge('public', [open, Sample])).toEqual(plain.getAllAndMerge('public', [open, Sample]));
  });

  it('reads the metadata of a key and target once, absent metadata included', () => {
    const read = jest.spyOn(Reflect, 'getMetadata');
    for (let i = 0; i < 5; i++) {
      reflector.getAllAndOverride('public', [open, Sample]);
      reflector.getAllAndOverride('public', [closed, Sample]);
    }
    expect(read.mock.calls.map(([key, target]) => [key, target])).toEqual([
      ['public', open],
      ['public', closed],
      ['public', Sample],
    ]);
  });

  it('keeps answers for different keys apart', () => {
    expect(reflector.get('public', open)).toBe(true);
    expect(reflector.get('other', open)).toBeUndefined();
    expect(reflector.get(Role, open)).toBe('ADMIN');
  });
});
