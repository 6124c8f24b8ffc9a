import { PlantStoreError } from './errors';

describe(PlantStoreError.name, () => {
  const init = { kind: 'http', status: 409, message: 'taken', attempts: 1 } as const;

  // An application that imports the ESM build and requires the CommonJS one loads two classes.
  it('is the class of an error made by another copy of the package', () => {
    let Other: typeof PlantStoreError | undefined;
    jest.isolateModules(() => {
      ({ PlantStoreError: Other } = jest.requireActual<typeof import('./errors')>('./errors'));
    });
    expect(Other).toBeDefined();
    expect(Other).not.toBe(PlantStoreError);
    const other = new (Other as typeof PlantStoreError)(init);
    expect(other instanceof PlantStoreError).toBe(true);
    expect(new PlantStoreError(init) instanceof (Other as typeof PlantStoreError)).toBe(true);
    expect(other).toBeInstanceOf(Error);
  });

  it('is not the class of other errors, or of things that look like one', () => {
    expect(new Error('x') instanceof PlantStoreError).toBe(false);
    expect({ name: 'PlantStoreError', kind: 'http' } instanceof PlantStoreError).toBe(false);
    expect((null as unknown) instanceof PlantStoreError).toBe(false);
  });

  it('leaves instanceof of a subclass as it is', () => {
    class Special extends PlantStoreError {}
    expect(new Special(init) instanceof Special).toBe(true);
    expect(new PlantStoreError(init) instanceof Special).toBe(false);
    expect(new Special(init) instanceof PlantStoreError).toBe(true);
  });
});
