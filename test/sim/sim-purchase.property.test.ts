import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { purchaseFrom } from '../../src/demo/sim-purchase.js';
import { fcOptions } from '../helpers/fc-options.js';

/**
 * `porter sim`'s checkout: the buyer's name is data. Whatever the name, the purchase is the
 * template with the name in place of each `{player}`, character for character, and one line;
 * a name with a control character (a line break could start a second command) is refused.
 */

const template = fc
  .array(fc.oneof(fc.constant('{player}'), fc.string({ unit: 'grapheme-ascii', maxLength: 8 })), { minLength: 1, maxLength: 6 })
  .map((parts) => `give ${parts.join('')}`);
const printable = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 64 })
  .filter((s) => !/\p{Cc}/u.test(s) && s.trim() !== '' && s.length <= 64);

describe('sim purchase', () => {
  test('a printable name is put in place of every {player} as it is ($&, $1 and {player} in a name included)', () => {
    fc.assert(
      fc.property(template, fc.oneof(printable, fc.constantFrom('$&', "$'", '$1', '{player}', 'Smith, John')), (command, player) => {
        const purchase = purchaseFrom({ command, player });
        assert.ok(!('refused' in purchase), JSON.stringify(purchase));
        const pieces = command.split('{player}');
        assert.equal(purchase.command, pieces.join(player));
        assert.equal(purchase.player, player);
        assert.equal(purchase.offlineExecute, false);
      }),
      fcOptions({ numRuns: 300 }),
    );
  });

  test('a name with a control character anywhere is refused, naming why', () => {
    const control = fc
      .integer({ min: 0, max: 0x9f })
      .filter((c) => c < 0x20 || c >= 0x7f)
      .map((c) => String.fromCharCode(c));
    fc.assert(
      fc.property(template, fc.string({ maxLength: 10 }), control, fc.string({ maxLength: 10 }), (command, before, cc, rest) => {
        const purchase = purchaseFrom({ command, player: `${before}${cc}${rest}` });
        assert.ok('refused' in purchase);
        assert.match(purchase.refused, /control character|empty/);
      }),
      fcOptions({ numRuns: 300 }),
    );
  });

  test('{player} with no name is refused; no name and no {player} runs whether anyone is online or not', () => {
    assert.match((purchaseFrom({ command: 'give {player} diamond 1' }) as { refused: string }).refused, /--player/);
    assert.deepEqual(purchaseFrom({ command: 'say hello' }), { command: 'say hello', player: undefined, offlineExecute: true });
    assert.ok('refused' in purchaseFrom({ command: '   ' }));
  });
});
