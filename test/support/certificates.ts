import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TestCertificate {
  certPath: string;
  keyPath: string;
  /** SHA-256 fingerprint, as node:tls reports a peer certificate's fingerprint256. */
  fingerprint: string;
}

/**
 * A self-signed certificate for localhost and 127.0.0.1, made now with openssl (a P-256 key,
 * valid for a day), written into `dir` as `<name>.crt` and `<name>.key`.
 */
export function makeCertificate(dir: string, name: string): TestCertificate {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-subj', `/CN=${name}`, '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-days', '1', '-keyout', keyPath, '-out', certPath,
  ], { stdio: 'ignore' });
  return { certPath, keyPath, fingerprint: new X509Certificate(readFileSync(certPath)).fingerprint256 };
}
