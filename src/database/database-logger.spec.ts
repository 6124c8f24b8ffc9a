import { Logger } from '@nestjs/common';
import { DatabaseLogger } from './database-logger';

describe(DatabaseLogger.name, () => {
  let log: jest.SpyInstance;
  let warn: jest.SpyInstance;
  const logger = new DatabaseLogger();

  beforeEach(() => {
    log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it('logs a slow statement without its parameters', () => {
    logger.logQuerySlow(1600, 'SELECT * FROM api_tokens WHERE token_hash = ?');
    expect(warn).toHaveBeenCalledWith('Statement took 1600 ms: SELECT * FROM api_tokens WHERE token_hash = ?');
  });

  it('says nothing about ordinary or failed statements', () => {
    logger.logQuery();
    logger.logQueryError();
    expect(log).not.toHaveBeenCalled();
    expect(warn).not.toHaveBeenCalled();
  });

  it('passes migrations, schema messages and warnings on', () => {
    logger.logMigration('Migration InitialSchema has been executed successfully.');
    logger.logSchemaBuild('creating table');
    logger.log('warn', 'something odd');
    logger.log('info', 'fine');
    expect(log).toHaveBeenCalledTimes(3);
    expect(warn).toHaveBeenCalledWith('something odd');
  });
});
