import { lineBreakOf, type Edit } from '../text.js';

/**
 * 7 Days to Die's serverconfig.xml: `<property name="TelnetPort" value="8081"/>` elements under
 * `<ServerSettings>`, many of them inside `<!-- … -->` comments in the shipped file (quoted in
 * test/fixtures/game-dirs/README.md), which count for nothing. Attribute values take either
 * quote and the five XML entities or character references, as the .NET XmlDocument the server
 * reads it with does. A later property overrides an earlier one.
 */
export interface XmlProperty {
  readonly name: string;
  readonly value: string;
  /** The raw attribute value between its quotes, [start, end). */
  readonly valueStart: number;
  readonly valueEnd: number;
}

export function parseServerConfigXml(text: string): XmlProperty[] {
  const properties: XmlProperty[] = [];
  let i = 0;
  while (i < text.length) {
    const tag = text.indexOf('<', i);
    if (tag < 0) break;
    if (text.startsWith('<!--', tag)) {
      const close = text.indexOf('-->', tag + 4);
      if (close < 0) break;
      i = close + 3;
      continue;
    }
    const end = tagEnd(text, tag);
    if (end < 0) break;
    const property = readProperty(text, tag, end);
    if (property) properties.push(property);
    i = end + 1;
  }
  return properties;
}

/** The `>` closing the tag at `tag`, skipping quoted attribute values (which may hold `>`). */
function tagEnd(text: string, tag: number): number {
  let quote: string | undefined;
  for (let i = tag + 1; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return i;
  }
  return -1;
}

function readProperty(text: string, tag: number, end: number): XmlProperty | undefined {
  if (!/^<property\s/i.test(text.slice(tag, end + 1))) return undefined;
  const attributes = new Map<string, { value: string; start: number; end: number }>();
  const pattern = /([A-Za-z_:][\w.:-]*)\s*=\s*("([^"]*)"|'([^']*)')/g;
  const body = text.slice(tag, end);
  for (const match of body.matchAll(pattern)) {
    const raw = match[3] ?? match[4] ?? '';
    const start = tag + match.index + match[0].length - raw.length - 1;
    attributes.set(match[1]!.toLowerCase(), { value: raw, start, end: start + raw.length });
  }
  const name = attributes.get('name');
  const value = attributes.get('value');
  if (!name || !value) return undefined;
  const decodedName = decodeEntities(name.value);
  const decodedValue = decodeEntities(value.value);
  if (decodedName === undefined || decodedValue === undefined) return undefined;
  return { name: decodedName, value: decodedValue, valueStart: value.start, valueEnd: value.end };
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/**
 * Undefined for text an XML parser would reject (an unknown entity, a bare `&`). A value read
 * from the file's bytes as Latin-1 must be decoded to text first (valueText), then this: `&#233;`
 * is é, not the byte 0xE9.
 */
export function decodeEntities(raw: string): string | undefined {
  let bad = false;
  const decoded = raw.replace(/&([^;&]*);?/g, (whole, entity: string) => {
    const numeric = /^#(x[0-9a-fA-F]+|[0-9]+)$/.exec(entity);
    const code = numeric
      ? parseInt(numeric[1]!.startsWith('x') ? numeric[1]!.slice(1) : numeric[1]!, numeric[1]!.startsWith('x') ? 16 : 10)
      : NaN;
    const named = ENTITIES[entity];
    if (!whole.endsWith(';') || (named === undefined && !(code >= 1 && code <= 0x10ffff))) bad = true;
    return named ?? (code >= 1 && code <= 0x10ffff ? String.fromCodePoint(code) : '');
  });
  return bad ? undefined : decoded;
}

export function lastXmlProperty(properties: readonly XmlProperty[], name: string): XmlProperty | undefined {
  return properties.findLast((property) => property.name === name);
}

/**
 * An edit setting a property's value in place, or adding the property before `</ServerSettings>`;
 * undefined when the file has neither (it is not a server config an edit can be trusted with).
 */
export function setXmlProperty(text: string, properties: readonly XmlProperty[], name: string, value: string): Edit | undefined {
  const property = lastXmlProperty(properties, name);
  if (property) return { start: property.valueStart, end: property.valueEnd, text: value };
  const close = text.lastIndexOf('</ServerSettings>');
  if (close < 0 || text.indexOf('<!--', close) >= 0) return undefined;
  const element = `<property name="${name}" value="${value}"/>`;
  const before = text.slice(text.lastIndexOf('\n', close - 1) + 1, close);
  if (!/^[ \t]*$/.test(before)) return { start: close, end: close, text: element };
  return { start: close, end: close, text: `\t${element}${lineBreakOf(text)}${before}` };
}
