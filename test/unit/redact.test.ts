import { expect } from 'chai';
import { redactUrl } from '../../src/redact.js';

describe('redactUrl', () => {
  const cases: [string, string][] = [
    ['smtp://daybook:s3cret@mail.example.com:587', 'smtp://***@mail.example.com:587'],
    ['smtp://daybook:s3cret@mail.example.com:587?tls=off', 'smtp://***@mail.example.com:587?tls=off'],
    // The user name too: some providers take the API key as the user name.
    ['smtps://SG.key-as-user@smtp.example.net:465', 'smtps://***@smtp.example.net:465'],
    // Text no URL parser takes: the user information still runs to the last @.
    ['smtp//daybook:s3cret@mail.example.com', '***@mail.example.com'],
    ['smtp://daybook:pa/ss#wo@rd@mail.example.com:25', 'smtp://***@mail.example.com:25'],
    ['daybook:s3cret@mail.example.com', '***@mail.example.com'],
    // A colon with no @ and no port after it: withheld whole.
    ['smtp://daybook:s3cret', 'smtp://***'],
    ['smtp://daybook:s3cret/path', 'smtp://***/path'],
    ['https://rates.example.com/latest?access_key=abc123&from=EUR', 'https://rates.example.com/latest?access_key=***&from=EUR'],
    ['https://rates.example.com/?token=abc&api-key=def&sig=ghi', 'https://rates.example.com/?token=***&api-key=***&sig=***'],
    ['smtp://mail.example.com?tls.key=-----BEGIN', 'smtp://mail.example.com?tls.key=***'],
  ];
  for (const [text, redacted] of cases) {
    it(`shows ${JSON.stringify(text)} as ${JSON.stringify(redacted)}`, () => {
      expect(redactUrl(text)).to.equal(redacted);
    });
  }

  it('leaves text that holds no credential as written', () => {
    for (const text of ['smtp://mail.example.com:587', 'smtp://[::1]:25?tls=off', 'mail.example.com:587', 'https://books.example.com/daybook', 'not a url', '', 'http://127.0.0.1:9']) {
      expect(redactUrl(text), text).to.equal(text);
    }
  });
});
