import { toPlantDto } from './plant.dto';

describe(toPlantDto.name, () => {
  it('shows a plant without its owner, and without a tag it has not', () => {
    expect(toPlantDto({ owner: 'alice', id: 1n, name: 'Fern', tag: null })).toStrictEqual({ id: 1n, name: 'Fern' });
    expect(toPlantDto({ owner: 'alice', id: 1n, name: 'Fern' })).toStrictEqual({ id: 1n, name: 'Fern' });
  });

  it('keeps a tag', () => {
    expect(toPlantDto({ id: 1n, name: 'Fern', tag: 'green' })).toStrictEqual({ id: 1n, name: 'Fern', tag: 'green' });
  });
});
