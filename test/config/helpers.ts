import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import assert from 'node:assert/strict';
import { ConfigError } from '../../src/errors.js';

export const SERVER_ID = '1b4e28ba-2fa1-11d2-883f-0016d3cca427';
export const OTHER_ID = '2c5f39cb-3fb2-42e3-994f-1127e4ddb538';
export const TOKEN = 'gci_live_9f8e7d6c5b4a';
export const PASSWORD = 'rcon-pass-4711';

/** A minimal valid config; pieces are overridden per test. */
export function minimal(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    api: { baseUrl: 'https://seller.example.com', token: TOKEN },
    servers: [{ id: SERVER_ID, executor: { type: 'rcon', password: PASSWORD } }],
    ...overrides,
  };
}

export interface TempDir {
  readonly path: string;
  write(relative: string, content: string): Promise<string>;
  remove(): Promise<void>;
}

export async function tempDir(): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), 'porter-config-test-'));
  return {
    path,
    async write(relative, content) {
      const file = join(path, relative);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, content);
      return file;
    },
    remove: () => rm(path, { recursive: true, force: true }),
  };
}

/** Awaits a rejection and returns it as a ConfigError with exit code 78. */
export async function configError(promise: Promise<unknown>): Promise<ConfigError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    assert.equal(error.exitCode, 78);
    return error;
  }
  assert.fail('expected the config to be rejected');
}
