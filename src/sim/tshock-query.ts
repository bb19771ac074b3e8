/**
 * .NET's Uri.UnescapeDataString, which TShock applies to a parameter the HTTP server has already
 * URL-decoded (Rests.EscapedParameter): every run of `%XX` escapes that spells valid UTF-8 is
 * decoded, anything else (a lone `%`, `%G1`, a broken sequence) stays as written, and `+` stays `+`.
 */
export function unescapeDataString(text: string): string {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => decodeRun(run));
}

/** A run of escapes, decoded sequence by sequence so that one bad byte keeps only itself. */
function decodeRun(run: string): string {
  const bytes = run.match(/%[0-9A-Fa-f]{2}/g)!.map((escape) => Number.parseInt(escape.slice(1), 16));
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const length = sequenceLength(bytes[i]!);
    const slice = bytes.slice(i, i + length);
    const decoded = length > 0 && slice.length === length ? tryDecode(slice) : undefined;
    if (decoded === undefined) {
      out += run.slice(i * 3, i * 3 + 3);
      i += 1;
    } else {
      out += decoded;
      i += length;
    }
  }
  return out;
}

function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

function tryDecode(bytes: number[]): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
  } catch {
    return undefined;
  }
}
