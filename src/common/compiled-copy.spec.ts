import { compileCopy, compileList } from './compiled-copy';

describe(compileCopy.name, () => {
  const double = (value: unknown) => (typeof value === 'number' ? value * 2 : value);

  it('copies the fields named, in their order, each converted, and no other', () => {
    const copy = compileCopy<Record<string, unknown>>([{ name: 'b' }, { name: 'a', convert: double }]);
    const copied = copy({ a: 1, b: 'x', c: true });
    expect(copied).toStrictEqual({ b: 'x', a: 2 });
    expect(Object.keys(copied)).toEqual(['b', 'a']);
  });

  it('keeps a field that is null or missing, unless told to leave it out', () => {
    const fields = [{ name: 'a' }, { name: 'b' }];
    expect(compileCopy(fields)({ a: null })).toStrictEqual({ a: null, b: undefined });
    expect(compileCopy(fields, { leaveOutNull: true })({ a: null })).toStrictEqual({});
    expect(compileCopy(fields, { leaveOutNull: true })({ a: 0, b: '' })).toStrictEqual({ a: 0, b: '' });
  });

  it('leaves out what a conversion makes null', () => {
    const copy = compileCopy([{ name: 'a', convert: () => null }], { leaveOutNull: true });
    expect(copy({ a: 1 })).toStrictEqual({});
  });

  it('refuses a name that is not an identifier, before it is written into code', () => {
    expect(() => compileCopy([{ name: 'a; process.exit()' }])).toThrow('is not a property name');
    expect(() => compileList([{ name: 'a-b' }])).toThrow('is not a property name');
  });
});

describe(compileList.name, () => {
  it('lists the fields in order, each converted, null for one that is missing', () => {
    const list = compileList([{ name: 'a' }, { name: 'b', convert: (value) => `<${String(value)}>` }, { name: 'c' }]);
    expect(list({ a: 1, b: 2 })).toEqual([1, '<2>', null]);
  });
});
