import { readFile } from 'node:fs/promises';
import { describeFsError } from '../config/read-file.js';
import { ConfigError, PorterError } from '../errors.js';

/** The address cannot be bound (in use, not of this host): exit 1, a restart may find it free. */
export class WebhookListenError extends PorterError {
  override readonly code = 'E_WEBHOOK_LISTEN';
}

/** A certificate or key file that cannot be read: a configuration error (exit 78). */
export class WebhookTlsError extends ConfigError {
  override readonly code = 'E_WEBHOOK_TLS';
}

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

/** The certificate chain and key, read now: at start and again on every SIGHUP, so a renewed certificate needs no restart. */
export async function readTls(files: TlsFiles): Promise<{ cert: Buffer; key: Buffer }> {
  const read = async (key: string, path: string) => {
    try {
      return await readFile(path);
    } catch (error) {
      throw new WebhookTlsError(`webhook.tls.${key}: cannot read ${path}: ${describeFsError(error)}`, { cause: error });
    }
  };
  const [cert, key] = await Promise.all([read('certFile', files.certFile), read('keyFile', files.keyFile)]);
  return { cert, key };
}
