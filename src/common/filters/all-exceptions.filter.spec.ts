import {
  ArgumentsHost,
  BadRequestException,
  ConflictException,
  ForbiddenException,
  HttpException,
  Logger,
  NotFoundException,
  PayloadTooLargeException,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AllExceptionsFilter } from './all-exceptions.filter';
import { DatabaseUnavailable, InternalError } from './server.errors';

interface FakeResponse {
  headersSent: boolean;
  status: jest.Mock;
  json: jest.Mock;
  end: jest.Mock;
}

describe(AllExceptionsFilter.name, () => {
  let filter: AllExceptionsFilter;
  let response: FakeResponse;
  let logError: jest.SpyInstance;
  let logWarn: jest.SpyInstance;

  const request = { method: 'POST', path: '/plants', url: '/plants?access_token=pst_secret', id: 'req-7' };

  function hostFor(res: FakeResponse, req: object = request): ArgumentsHost {
    return {
      switchToHttp: () => ({ getResponse: () => res, getRequest: () => req, getNext: () => undefined }),
    } as unknown as ArgumentsHost;
  }

  function answer(exception: unknown): unknown {
    filter.catch(exception, hostFor(response));
    expect(response.status).toHaveBeenCalledTimes(1);
    expect(response.json).toHaveBeenCalledTimes(1);
    const [status] = response.status.mock.calls[0] as [number];
    const [body] = response.json.mock.calls[0] as [unknown];
    return { status, body };
  }

  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({
      providers: [AllExceptionsFilter],
    }).compile();
    filter = moduleRef.get(AllExceptionsFilter);
    response = { headersSent: false, status: jest.fn(), json: jest.fn(), end: jest.fn() };
    response.status.mockReturnValue(response);
    logError = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    logWarn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });

  afterEach(() => jest.restoreAllMocks());

  describe('HttpException', () => {
    it('answers with its status and string message', () => {
      expect(answer(new BadRequestException('name must not be blank'))).toEqual({
        status: 400,
        body: { error: 400, message: 'name must not be blank' },
      });
      expect(logError).not.toHaveBeenCalled();
    });

    it('joins an array of messages', () => {
      const exception = new BadRequestException(['id must be an integer', 'name must not be blank']);
      expect(answer(exception)).toEqual({
        status: 400,
        body: { error: 400, message: 'id must be an integer; name must not be blank' },
      });
    });

    it('reads a plain string response', () => {
      expect(answer(new HttpException('I am a teapot', 418))).toEqual({
        status: 418,
        body: { error: 418, message: 'I am a teapot' },
      });
    });

    it('reads a message from an object response', () => {
      expect(answer(new HttpException({ message: 'custom', extra: 'not sent' }, 422))).toEqual({
        status: 422,
        body: { error: 422, message: 'custom' },
      });
    });

    it('falls back to the reason phrase when the message is empty', () => {
      expect(answer(new HttpException('', 409))).toEqual({ status: 409, body: { error: 409, message: 'Conflict' } });
    });

    it('keeps the default messages of the built-in exceptions', () => {
      expect(answer(new ForbiddenException())).toEqual({ status: 403, body: { error: 403, message: 'Forbidden' } });
    });

    it('answers the router 404 without echoing the URL', () => {
      expect(answer(new NotFoundException('Cannot POST /plants/pst_secret?access_token=pst_secret'))).toEqual({
        status: 404,
        body: { error: 404, message: 'No route for POST at this path; the API is described at /docs' },
      });
    });

    it('keeps the message of a 404 raised by the application', () => {
      expect(answer(new NotFoundException('Plant 5 not found'))).toEqual({
        status: 404,
        body: { error: 404, message: 'Plant 5 not found' },
      });
    });

    it('cuts a long message to 500 characters', () => {
      const { body } = answer(new ConflictException('x'.repeat(2000))) as { body: { message: string } };
      expect(body.message).toHaveLength(500);
      expect(body.message).toBe(`${'x'.repeat(499)}…`);
    });

    it('leaves a message of exactly 500 characters whole', () => {
      const { body } = answer(new PayloadTooLargeException('y'.repeat(500))) as { body: { message: string } };
      expect(body.message).toBe('y'.repeat(500));
    });

    it('logs an HttpException of status 500 or more', () => {
      expect(answer(new HttpException('Upstream gone', 502))).toEqual({
        status: 502,
        body: { error: 502, message: 'Upstream gone' },
      });
      expect(logError).toHaveBeenCalledTimes(1);
    });
  });

  describe('database unavailable', () => {
    const refused = () => Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:3306'), { code: 'ECONNREFUSED' });

    it('answers the named error of the data-access API with 503 and no driver detail', () => {
      expect(answer(new DatabaseUnavailable(refused()))).toEqual({
        status: 503,
        body: { error: 503, message: new DatabaseUnavailable().message },
      });
    });

    it("logs an outage as one warning line without a stack, with the driver's reason", () => {
      answer(new DatabaseUnavailable(refused()));
      expect(logError).not.toHaveBeenCalled();
      expect(logWarn).toHaveBeenCalledWith({
        requestId: 'req-7',
        msg: 'POST /plants -> 503: connect ECONNREFUSED 10.0.0.5:3306',
      });
    });

    it('answers an unexpected error with 500, whatever the state of the database', () => {
      expect(answer(new TypeError("Cannot read properties of undefined (reading 'manager')"))).toEqual({
        status: 500,
        body: { error: 500, message: new InternalError().message },
      });
    });
  });

  describe('errors raised by Express middleware', () => {
    it('answers a 4xx with the reason phrase only, not its own message', () => {
      const exception = Object.assign(new Error('Unexpected token p in JSON at position 7: pst_secret'), {
        status: 400,
        statusCode: 400,
        expose: true,
      });
      expect(answer(exception)).toEqual({ status: 400, body: { error: 400, message: 'Bad Request' } });
      expect(logError).not.toHaveBeenCalled();
    });

    it('uses the reason phrase of other 4xx statuses', () => {
      expect(answer({ status: 413, expose: true })).toEqual({
        status: 413,
        body: { error: 413, message: 'Payload Too Large' },
      });
    });

    it('falls back to a generic phrase for a status without one', () => {
      expect(answer({ status: 499 })).toEqual({ status: 499, body: { error: 499, message: 'Bad request' } });
    });

    it.each([500, 503, 302, 200, '400', 99])('does not take the status %p from an unknown error', (status) => {
      expect(answer(Object.assign(new Error('boom'), { status }))).toEqual({
        status: 500,
        body: { error: 500, message: new InternalError().message },
      });
    });
  });

  describe('unexpected errors', () => {
    it('answers 500 with a generic message and logs the stack', () => {
      const exception = new Error('SELECT secret FROM api_tokens WHERE token_hash = ...');
      const { status, body } = answer(exception) as { status: number; body: unknown };

      expect(status).toBe(500);
      expect(body).toEqual({ error: 500, message: new InternalError().message });
      expect(JSON.stringify(body)).not.toContain('SELECT');
      expect(JSON.stringify(body)).not.toContain('at ');
      expect(logError).toHaveBeenCalledTimes(1);
      const [{ requestId, msg: logged }] = logError.mock.calls[0] as [{ requestId: string; msg: string }];
      expect(requestId).toBe('req-7');
      expect(logged).toContain('POST /plants -> 500');
      expect(logged).toContain(exception.stack);
      expect(logged).not.toContain('access_token');
    });

    it.each([
      ['a string', 'boom'],
      ['null', null],
      ['undefined', undefined],
      ['a number', 42],
    ])('answers a thrown %s with 500', (_label, exception) => {
      expect(answer(exception)).toEqual({ status: 500, body: { error: 500, message: new InternalError().message } });
      expect(logError).toHaveBeenCalledWith({ requestId: 'req-7', msg: `POST /plants -> 500: ${String(exception)}` });
    });
  });

  describe('a token in the URL', () => {
    const TOKEN = `pst_${'T'.repeat(43)}`;
    const pasted = {
      method: 'DELETE',
      path: `/plants/${TOKEN}`,
      originalUrl: `/plants/${TOKEN}?access_token=${TOKEN}`,
      url: `/plants/${TOKEN}?access_token=${TOKEN}`,
      id: 'req-8',
    };
    const logged = () => JSON.stringify([...logWarn.mock.calls, ...logError.mock.calls]);

    it('is redacted in the line of a 503, as in the request line', () => {
      filter.catch(new DatabaseUnavailable(), hostFor(response, pasted));
      expect(logWarn).toHaveBeenCalledWith({
        requestId: 'req-8',
        msg: expect.stringMatching(/^DELETE \/plants\/\[redacted\] -> 503: /),
      });
      expect(logged()).not.toContain(TOKEN.slice(4));
    });

    it("is redacted in the line of a 500, the error's own text included", () => {
      filter.catch(new Error(`No plant at /plants/${TOKEN}`), hostFor(response, pasted));
      expect(logError).toHaveBeenCalledWith({
        requestId: 'req-8',
        msg: expect.stringMatching(
          /^DELETE \/plants\/\[redacted\] -> 500: Error: No plant at \/plants\/\[redacted\]\n/,
        ),
      });
      expect(logged()).not.toContain(TOKEN.slice(4));
    });
  });

  describe('when the headers are already sent', () => {
    it('only ends the response', () => {
      response.headersSent = true;
      filter.catch(new BadRequestException('too late'), hostFor(response));
      expect(response.end).toHaveBeenCalledTimes(1);
      expect(response.status).not.toHaveBeenCalled();
      expect(response.json).not.toHaveBeenCalled();
    });

    it('still logs an unexpected error', () => {
      response.headersSent = true;
      filter.catch(new Error('stream broke'), hostFor(response));
      expect(response.end).toHaveBeenCalledTimes(1);
      expect(response.status).not.toHaveBeenCalled();
      expect(logError).toHaveBeenCalledTimes(1);
    });
  });
});
