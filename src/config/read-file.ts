import { readFile } from 'node:fs/promises';
import { ConfigError } from '../errors.js';
import { locateJsonError } from './json-error.js';

/** Reads and parses the JSON config file; every failure is a ConfigError naming the file. */
export async function readConfigFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`Cannot read the configuration file ${file}: ${describeFsError(error)}`);
  }
  return parseConfigText(text, file);
}

function parseConfigText(text: string, file: string): unknown {
  // Editors on Windows like to start UTF-8 files with a byte order mark, which JSON.parse rejects.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === '') {
    throw new ConfigError(`The configuration file ${file} is empty: write a JSON object such as the one in config.example.json.`);
  }
  try {
    return JSON.parse(body);
  } catch {
    const where = locateJsonError(body);
    if (where) {
      throw new ConfigError(`${file}:${where.line}:${where.column}: invalid JSON: ${where.message}. Fix the file and try again.`);
    }
    throw new ConfigError(`The configuration file ${file} is not valid JSON. Fix the file and try again.`);
  }
}

/** Says what went wrong with a file and what to do, without echoing anything read from it. */
export function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file (check the path)';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied (make it readable by the user porter runs as)';
    case 'EISDIR':
      return 'it is a directory, not a file';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    default:
      return code ? `cannot be read (${code})` : 'cannot be read';
  }
}
