import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';

/** DAYBOOK_RATE_MAX_AGE_DAYS: how much older than a send's or payment's date a stored rate may be. */
describe('DAYBOOK_RATE_MAX_AGE_DAYS', () => {
  function configErrorFor(env: NodeJS.ProcessEnv): ConfigError {
    try {
      loadConfig(env);
    } catch (error) {
      return error as ConfigError;
    }
    throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
  }

  it('is 4 days (a weekend plus a holiday) unless set', () => {
    expect(loadConfig({}).rateMaxAgeDays).to.equal(4);
  });

  for (const value of ['0', '7', '31']) {
    it(`takes ${value}`, () => {
      expect(loadConfig({ DAYBOOK_RATE_MAX_AGE_DAYS: value }).rateMaxAgeDays).to.equal(Number(value));
    });
  }

  for (const value of ['-1', '32', '4.5', 'four', '', ' 4']) {
    it(`a bad value (${JSON.stringify(value)}) stops start-up with one line naming it`, () => {
      const error = configErrorFor({ DAYBOOK_RATE_MAX_AGE_DAYS: value });
      expect(error.name).to.equal('ConfigError');
      expect(error.message).to.equal(`DAYBOOK_RATE_MAX_AGE_DAYS: must be a whole number from 0 to 31 (got ${JSON.stringify(value)})`);
      expect(error.message).to.not.match(/[\r\n]/);
    });
  }
});
