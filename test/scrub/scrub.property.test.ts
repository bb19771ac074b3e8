import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { MAX_SECRET_LENGTH } from '../../src/config/secrets.js';
import { MIN_SCRUB_LENGTH, REDACTED } from '../../src/scrub.js';
import { SecretBook } from '../../src/secret-book.js';
import { fcOptions } from '../helpers/fc-options.js';

/*
 * Whatever the secrets (any number, any size up to the limit, containing each other, full of what
 * a regular expression or JSON or a URL escapes, beyond ASCII), every form of every secret long
 * enough to scrub is gone from any text. The scrubber once built one regular expression of them
 * all, which V8 refuses past some size, and the refusal quoted every secret.
 */

// No letter of "[Redacted]" besides the brackets: a secret cannot then be spelled anew by the
// replacement and what it borders, so a hit in the output is a leak, never a coincidence.
const ALPHABET = [...'xyz0123456789_-.*+?^${}()|[]\\/"\n %é€😀'];
const piece = fc.string({ unit: fc.constantFrom(...ALPHABET), minLength: 0, maxLength: 24 });

/** The forms a secret takes in output (as src/scrub.ts lists them). */
function forms(secret: string): string[] {
  const once = JSON.stringify(secret).slice(1, -1);
  return [secret, once, JSON.stringify(once).slice(1, -1), encodeURIComponent(secret)];
}

/**
 * Secrets built from shared pieces, so that they contain, start and end one another; a few made
 * long (up to the limit) by repeating a piece.
 */
const secretsArb = fc
  .tuple(
    fc.array(piece, { minLength: 1, maxLength: 8 }),
    fc.array(fc.tuple(fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), fc.nat({ max: 20 })), { minLength: 1, maxLength: 40 }),
  )
  .map(([pieces, recipes]) =>
    recipes.map(([picks, long]) => {
      const secret = picks.map((pick) => pieces[pick % pieces.length]!).join('');
      // One secret in twenty is long: repeated up to the limit.
      return long === 0 && secret.length > 0 ? secret.repeat(Math.floor(MAX_SECRET_LENGTH / secret.length)) : secret;
    }),
  );

/** Text around the secrets, in every form, side by side, overlapping and alone. */
function textAround(secrets: readonly string[], picks: readonly number[], filler: readonly string[]): string {
  const all = secrets.flatMap(forms);
  return picks.map((pick, index) => `${filler[index % filler.length] ?? ''}${all[pick % all.length] ?? ''}`).join('');
}

function leaks(output: string, secrets: readonly string[]): string[] {
  return secrets
    .filter((secret) => secret.length >= MIN_SCRUB_LENGTH)
    .flatMap((secret) => forms(secret).filter((form) => output.includes(form)));
}

describe('the scrubber, for any secrets', () => {
  test('every form of every secret of at least MIN_SCRUB_LENGTH characters is gone from the text', () => {
    fc.assert(
      fc.property(
        secretsArb,
        fc.array(fc.nat(), { minLength: 1, maxLength: 30 }),
        fc.array(fc.string({ unit: fc.constantFrom(...ALPHABET) }), { maxLength: 5 }),
        (secrets, picks, filler) => {
          const book = new SecretBook(secrets);
          const text = textAround(secrets, picks, filler);
          const output = book.scrub(text);
          assert.deepEqual(leaks(output, secrets), []);
          // Each stretch left between replacements is the original text, not a piece of a secret's form.
          for (const stretch of output.split(REDACTED)) assert.deepEqual(leaks(stretch, secrets), []);
        },
      ),
      fcOptions({ numRuns: 50 }),
    );
  });

  test('thousands of secrets, every one of them scrubbed, and a text without one left as it is', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1000, max: 3000 }), fc.nat(), (count, seed) => {
        const secrets = Array.from({ length: count }, (_, index) => `gci_${(seed + index * 7919).toString(36)}x${index}`);
        const book = new SecretBook(secrets);
        const clean = 'nothing secret here, {"event":"delivery.done","id":"42"}';
        assert.equal(book.scrub(clean), clean);
        const text = secrets.map((secret) => `<${secret}>`).join('');
        assert.equal(book.scrub(text), `<${REDACTED}>`.repeat(count));
      }),
      fcOptions({ numRuns: 5 }),
    );
  });

  test('a secret shorter than MIN_SCRUB_LENGTH is left in free text; a longer one holding it goes whole', () => {
    const book = new SecretBook(['zzy', 'zzyzzy-long']);
    assert.equal(book.scrub('a zzy b zzyzzy-long c'), `a zzy b ${REDACTED} c`);
  });

  test('secrets that overlap in the text go as one stretch: no part of either is left', () => {
    const book = new SecretBook(['xyzw', 'wxyz12']);
    assert.equal(book.scrub('<xyzwxyz12>'), `<${REDACTED}>`);
    // Touching is not overlapping: two secrets side by side stay two replacements.
    assert.equal(book.scrub('<xyzwxyzw>'), `<${REDACTED}${REDACTED}>`);
  });
});
