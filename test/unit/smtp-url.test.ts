import { expect } from 'chai';
import { isLoopbackHost, readSmtpUrl } from '../../src/smtp-url.js';

describe('readSmtpUrl (DAYBOOK_SMTP_URL)', () => {
  it('requires STARTTLS for smtp://, and hands nodemailer the URL as written', () => {
    expect(readSmtpUrl('smtp://daybook:p%40ss@mail.example.com:587?connectionTimeout=10000')).to.deep.equal({
      transportUrl: 'smtp://daybook:p%40ss@mail.example.com:587?connectionTimeout=10000',
      tls: 'starttls',
      loopback: false,
    });
  });

  it('reads smtps:// as TLS from the first byte', () => {
    expect(readSmtpUrl('smtps://daybook:pw@mail.example.com:465')).to.deep.equal({ transportUrl: 'smtps://daybook:pw@mail.example.com:465', tls: 'implicit', loopback: false });
  });

  it('takes ?tls=off out of what nodemailer reads (it would be an unknown option there)', () => {
    expect(readSmtpUrl('smtp://daybook:p%40ss@relay.lan:25?tls=off&connectionTimeout=10000')).to.deep.equal({
      transportUrl: 'smtp://daybook:p%40ss@relay.lan:25?connectionTimeout=10000',
      tls: 'off',
      loopback: false,
    });
    expect(readSmtpUrl('smtp://127.0.0.1:2525?tls=off')).to.deep.equal({ transportUrl: 'smtp://127.0.0.1:2525', tls: 'off', loopback: true });
  });

  it('accepts the options that agree with requiring STARTTLS', () => {
    expect(readSmtpUrl('smtp://mail.example.com?requireTLS=true&ignoreTLS=false&opportunisticTLS=false').tls).to.equal('starttls');
    expect(readSmtpUrl('smtp://relay.lan?tls=off&ignoreTLS=true').tls).to.equal('off');
  });

  it('knows this machine: localhost, 127.0.0.0/8 and ::1, nothing else', () => {
    for (const host of ['localhost', 'LOCALHOST', '127.0.0.1', '127.255.0.9', '[::1]', '[::ffff:7f00:1]']) expect(isLoopbackHost(host), host).to.equal(true);
    for (const host of ['mail.example.com', '10.0.0.1', '128.0.0.1', '[::2]', 'localhost.example.com', '']) expect(isLoopbackHost(host), host).to.equal(false);
  });
});
