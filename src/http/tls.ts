import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createSecureContext, type Server as TlsServer } from 'node:tls';
import { type Config, ConfigError } from '../config.js';

/**
 * Native TLS, for installs with no reverse proxy in front: the certificate (chain) and key as
 * PEM files named by DAYBOOK_TLS_CERT and DAYBOOK_TLS_KEY, read at start and again on SIGHUP,
 * so a renewed certificate is served without a restart. TLS 1.2 or newer only.
 */

export const TLS_MIN_VERSION = 'TLSv1.2';

export interface TlsFiles {
  cert: Buffer;
  key: Buffer;
}

/**
 * The certificate and key the settings name, checked: each file readable and in PEM, and the
 * key the certificate's own. Null when TLS is off. A problem is one line naming the setting.
 */
export function readTlsFiles(config: Pick<Config, 'tlsCert' | 'tlsKey'>): TlsFiles | null {
  if (config.tlsCert === null || config.tlsKey === null) return null;
  const files = { cert: readSetting('DAYBOOK_TLS_CERT', config.tlsCert), key: readSetting('DAYBOOK_TLS_KEY', config.tlsKey) };
  checkPem('DAYBOOK_TLS_CERT', config.tlsCert, () => createSecureContext({ cert: files.cert }), 'a PEM certificate');
  checkPem('DAYBOOK_TLS_KEY', config.tlsKey, () => createSecureContext({ key: files.key }), 'a PEM private key without a passphrase');
  try {
    createSecureContext({ ...files, minVersion: TLS_MIN_VERSION });
  } catch (error) {
    throw new ConfigError(`DAYBOOK_TLS_KEY: ${config.tlsKey} is not the key of the certificate in ${config.tlsCert} (${(error as Error).message})`);
  }
  return files;
}

function readSetting(setting: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new ConfigError(`${setting}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

function checkPem(setting: string, path: string, load: () => unknown, what: string): void {
  try {
    load();
  } catch (error) {
    throw new ConfigError(`${setting}: ${path} is not ${what} (${(error as Error).message})`);
  }
}

/** New connections to `server` (made with these settings' files) get `files` from now on. */
export function useCertificate(server: Server, files: TlsFiles): void {
  (server as unknown as TlsServer).setSecureContext({ ...files, minVersion: TLS_MIN_VERSION });
}
