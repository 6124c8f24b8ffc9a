import { DEPRECATION_KEY, Deprecated, deprecationFields } from './deprecated.decorator';

describe(Deprecated.name, () => {
  it('answers with the RFC 9745 date, the RFC 8594 date and the deprecation link', () => {
    expect(
      deprecationFields({ since: '2026-12-01', sunset: '2027-06-30', link: 'https://example.com/migrate' }),
    ).toEqual({
      Deprecation: '@1796083200',
      Sunset: 'Wed, 30 Jun 2027 00:00:00 GMT',
      Link: '<https://example.com/migrate>; rel="deprecation"',
    });
  });

  it('sends no Link without a link, and takes a sunset on the day of the deprecation', () => {
    expect(deprecationFields({ since: '2027-01-01', sunset: '2027-01-01' })).toEqual({
      Deprecation: '@1798761600',
      Sunset: 'Fri, 01 Jan 2027 00:00:00 GMT',
    });
  });

  it.each([
    [{ since: '2027-06-30', sunset: '2027-06-29' }, /sunset 2027-06-29 is before since 2027-06-30/],
    [{ since: '2027-6-30', sunset: '2027-12-31' }, /since must be a day written YYYY-MM-DD/],
    [{ since: '2027-01-01', sunset: '2027-02-30' }, /sunset must be a day/],
    [{ since: '2027-01-01T00:00:00Z', sunset: '2027-12-31' }, /since must be a day/],
    [{ since: '2027-01-01', sunset: '2027-12-31', link: 'https://example.com/a b' }, /link must be a URI reference/],
    [{ since: '2027-01-01', sunset: '2027-12-31', link: 'https://example.com/>; rel="x' }, /link must be/],
  ])('refuses %j when the controller is loaded', (notice, message) => {
    expect(() => Deprecated(notice)).toThrow(message);
  });

  it('keeps the notice on the handler, where DeprecatedRoutes and the OpenAPI document find it', () => {
    const notice = { since: '2026-12-01', sunset: '2027-06-30' };
    class Controller {
      @Deprecated(notice)
      handler(): void {}
    }
    expect(Reflect.getMetadata(DEPRECATION_KEY, Controller.prototype.handler)).toEqual(notice);
  });
});
