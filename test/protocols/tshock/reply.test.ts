import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { commandOutput, readReply } from '../../../src/protocols/tshock/reply.js';

/** How porter reads one answer of TShock's REST API (the rules are at the top of src/protocols/tshock/reply.ts). */
describe('readReply', () => {
  const cases: [string, number, string, string][] = [
    ['TShock\'s "200"', 200, '{\n  "status": "200",\n  "response": ["Gave Bob 1 Zenith."]\n}', 'ok'],
    ['a status written as a number', 200, '{"status": 200, "response": []}', 'ok'],
    ['a JSON "200" under an HTTP error (something in between)', 502, '{"status": "200", "response": []}', 'unreadable'],
    ['no token', 401, '{"status": "401", "error": "Not authorized. The specified API endpoint requires a token."}', 'rejected'],
    ['a wrong token', 403, '{"status": "403", "error": "Not authorized. …"}', 'rejected'],
    ['a proxy refusing credentials with a page', 403, '<html>403 Forbidden</html>', 'rejected'],
    ['a missing cmd', 400, '{"status": "400", "error": "Missing or empty cmd parameter"}', 'refused'],
    ['an unknown endpoint', 404, '{"status": "404", "error": "Specified API endpoint doesn\'t exist."}', 'refused'],
    ['a proxy refusing a long URL', 414, '<html>414 Request-URI Too Large</html>', 'refused'],
    ['an exception in the command', 500, '{"status": "500", "error": "Internal server error.", "errormsg": "boom"}', 'server-error'],
    ['a 200 that is not JSON', 200, 'Index was outside the bounds of the array.', 'unreadable'],
    ['a JSON object without a status', 200, '{"response": ["Gave Bob 1 Zenith."]}', 'unreadable'],
    ['a status that is no number', 200, '{"status": "OK"}', 'unreadable'],
    ['a proxy page for a stopped TShock', 502, '<html>502 Bad Gateway</html>', 'unreadable'],
    ['a cut body', 200, '{"status": "200", "respo', 'unreadable'],
  ];
  for (const [name, status, body, kind] of cases) {
    test(`${name}: ${kind}`, () => {
      assert.equal(readReply(status, body).kind, kind);
    });
  }

  test('the reason is the error and, for an exception, its message, never the stack trace', () => {
    const reply = readReply(500, '{"status": "500", "error": "Internal server error.", "errormsg": "boom", "stacktrace": "at X.Y()"}');
    assert.deepEqual(reply, { kind: 'server-error', status: '500', reason: 'Internal server error.: boom' });
  });
});

describe('commandOutput', () => {
  test('the response lines; a single string is one line; without a response it is no command answer', () => {
    assert.deepEqual(commandOutput({ status: '200', response: ['a', 'b'] }), ['a', 'b']);
    assert.deepEqual(commandOutput({ status: '200', response: 'Token is valid' }), ['Token is valid']);
    assert.deepEqual(commandOutput({ status: '200', response: ['a', 7, null] }), ['a', '7', 'null']);
    assert.equal(commandOutput({ status: '200' }), undefined);
    assert.equal(commandOutput({ status: '200', response: { a: 1 } }), undefined);
  });
});
