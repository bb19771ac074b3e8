import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { detectGameServers, type DetectOptions } from '../../src/init/detect/detect.js';
import type { Detection, DetectionReport } from '../../src/init/detect/types.js';

/** A folder of test/fixtures/game-dirs (compiled tests run from dist/test/init/). */
export function gameDir(name: string): string {
  return fileURLToPath(new URL(`../../../test/fixtures/game-dirs/${name}`, import.meta.url));
}

/** Detection in `dir` alone: no processes, no environment, no home folder or container data. */
export function detectIn(dir: string, options: Partial<DetectOptions> = {}): DetectionReport {
  return detectGameServers({ dir, env: {}, processes: [], places: {}, ...options });
}

/** The one detection a folder should give. */
export function onlyDetection(report: DetectionReport): Detection {
  assert.equal(report.detections.length, 1, `expected one detection, got ${report.detections.map((d) => d.game).join(', ') || 'none'}`);
  return report.detections[0]!;
}

export function problemCodes(detection: Detection): string[] {
  return detection.problems.map((problem) => problem.code);
}

/** A scratch folder with files written into it; remove() when done. */
export class Scratch {
  readonly path = mkdtempSync(join(tmpdir(), 'porter-detect-'));

  write(relative: string, content: string | Uint8Array): string {
    const file = join(this.path, relative);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
    return file;
  }

  read(relative: string): Buffer {
    return readFileSync(join(this.path, relative));
  }

  /** A copy of a fixture folder, to apply fixes to. */
  copyOf(fixture: string): string {
    cpSync(gameDir(fixture), this.path, { recursive: true });
    return this.path;
  }

  remove(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}
