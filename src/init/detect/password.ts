import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A new password for a fix to write: 24 letters and digits (about 143 bits), which every game's
 * format takes unquoted and within BattlEye's 32-character limit. Rejection sampling keeps every
 * character equally likely.
 */
export function generatePassword(random: (size: number) => Uint8Array = randomBytes): string {
  let password = '';
  while (password.length < 24) {
    for (const byte of random(32)) {
      if (byte < 248 && password.length < 24) password += ALPHABET[byte % ALPHABET.length];
    }
  }
  return password;
}
