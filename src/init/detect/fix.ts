import { PorterError } from '../../errors.js';
import { applyEdit, decodeSettings, encodeSettings, type Edit } from './text.js';
import type { Fix } from './types.js';

/** A password `Fix.apply` refuses to write: it must be safe unquoted in every format it edits. */
export class FixPasswordError extends PorterError {
  override readonly code = 'E_FIX_PASSWORD';
}

/** Letters and digits only, and at most 32 of them: BattlEye allows no more, and no format needs quoting then. */
const SAFE_PASSWORD = /^[A-Za-z0-9]{8,32}$/;

export type FixStep = (text: string, password: string) => Edit | undefined;

interface FixSpec {
  readonly file: string;
  readonly shownFile: string;
  readonly summary: string;
  readonly setsPassword: boolean;
  /**
   * The edits, each made on the text the one before left, starting from the file as it is now (a
   * file changed since detection is edited as it is then). A step with nothing to do gives undefined.
   */
  readonly steps: readonly FixStep[];
}

export function makeFix(spec: FixSpec): Fix {
  return {
    file: spec.file,
    shownFile: spec.shownFile,
    summary: spec.summary,
    setsPassword: spec.setsPassword,
    apply(current: Uint8Array, password: string): Buffer {
      if (!SAFE_PASSWORD.test(password)) {
        throw new FixPasswordError('A password written into game settings must be 8 to 32 letters and digits; use generatePassword().');
      }
      const settings = decodeSettings(current);
      const text = spec.steps.reduce((before, step) => {
        const edit = step(before, password);
        return edit ? applyEdit(before, edit) : before;
      }, settings.text);
      return encodeSettings(settings, text);
    },
  };
}

/** "set A and B in ./file", from the changes a fix makes (those it does not make are left out as false). */
export function fixSummary(changes: readonly (string | false)[], shownFile: string): string {
  return `set ${changes.filter((change): change is string => change !== false).join(' and ')} in ${shownFile}`;
}
