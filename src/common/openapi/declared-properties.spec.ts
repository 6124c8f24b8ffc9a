import { ApiProperty, ApiPropertyOptional, OmitType, PickType } from '@nestjs/swagger';
import { declaredProperties, viewAs } from './declared-properties';

class Resource {
  secretOwner: string;

  @ApiProperty()
  id: number;

  @ApiProperty()
  name: string;

  @ApiPropertyOptional()
  tag?: string | null;
}
class Shown extends OmitType(Resource, ['secretOwner'] as const) {}
class Picked extends PickType(Resource, ['tag', 'id'] as const) {}
class Extended extends Shown {
  @ApiProperty()
  createdAt: Date;
}

describe(declaredProperties.name, () => {
  it('lists the properties a DTO declares for the document, in the order declared, mapped and inherited ones too', () => {
    expect(declaredProperties(Resource)).toEqual(['id', 'name', 'tag']);
    expect(declaredProperties(Shown)).toEqual(['id', 'name', 'tag']);
    expect(declaredProperties(Picked)).toEqual(['id', 'tag']);
    expect(declaredProperties(Extended)).toEqual(['id', 'name', 'tag', 'createdAt']);
  });
});

describe(viewAs.name, () => {
  const show = viewAs(Extended);
  const at = new Date('2026-11-24T09:30:00.123Z');

  it('copies the declared properties, in their order, and nothing else', () => {
    const view = show({ createdAt: at, tag: 'green', name: 'Fern', id: 1, secretOwner: 'alice', other: 1 });
    expect(view).toStrictEqual({ id: 1, name: 'Fern', tag: 'green', createdAt: at });
    expect(Object.keys(view)).toEqual(['id', 'name', 'tag', 'createdAt']);
  });

  it('leaves out a property that is null or missing, never writing null', () => {
    expect(show({ id: 1, name: 'Fern', tag: null, createdAt: at })).toStrictEqual({
      id: 1,
      name: 'Fern',
      createdAt: at,
    });
    expect(show({ id: 1, name: 'Fern', createdAt: at })).toStrictEqual({ id: 1, name: 'Fern', createdAt: at });
  });
});
