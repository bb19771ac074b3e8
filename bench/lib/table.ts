import type { Figure } from './figure.js';

/** The figures as rows, one format for the terminal and one for Markdown. */

interface Row {
  readonly figure: string;
  readonly value: string;
  readonly target: string;
  readonly verdict: string;
  readonly runs: string;
}

function formatValue(value: number, unit: string): string {
  if (!Number.isFinite(value)) return 'n/a';
  switch (unit) {
    case 'ratio':
      return value.toFixed(3);
    case 'count':
      return String(Math.round(value));
    case '/s':
      return `${Math.round(value).toLocaleString('en-US')} /s`;
    case 'MB':
      return `${value.toFixed(1)} MB`;
    case 'ms':
      return `${value < 10 ? value.toFixed(3).replace(/0+$/, '').replace(/\.$/, '') : Math.round(value)} ms`;
    default:
      return `${value} ${unit}`;
  }
}

function formatRuns(figure: Figure): string {
  if (figure.runs.length <= 1) return '';
  const shown = figure.runs.slice(0, 10).map((v) => formatValue(v, figure.unit).replace(/ (ms|MB|\/s)$/, ''));
  return `${shown.join(' · ')}${figure.runs.length > 10 ? ' …' : ''}`;
}

export function rowsOf(figures: readonly Figure[]): Row[] {
  return figures.map((f) => ({
    figure: f.label,
    value: formatValue(f.value, f.unit),
    target: f.target ? f.target.text : '',
    verdict: f.pass === undefined ? '' : f.pass ? 'PASS' : 'MISS',
    runs: formatRuns(f),
  }));
}

const HEADERS: Row = { figure: 'figure', value: 'median', target: 'target', verdict: '', runs: 'runs' };
const COLUMNS = ['figure', 'value', 'target', 'verdict', 'runs'] as const;

export function textTable(rows: readonly Row[]): string {
  const all = [HEADERS, ...rows];
  const widths = COLUMNS.map((c) => Math.max(...all.map((r) => r[c].length)));
  const line = (r: Row) =>
    COLUMNS.map((c, i) => (c === 'value' ? r[c].padStart(widths[i]!) : r[c].padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(HEADERS), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function markdownTable(rows: readonly Row[]): string {
  const escape = (text: string) => text.replace(/\|/g, '\\|');
  const out = ['| figure | median | target | | runs |', '|---|---:|---|---|---|'];
  for (const r of rows)
    out.push(
      `| ${escape(r.figure)} | ${escape(r.value)} | ${escape(r.target)} | ${r.verdict ? `**${r.verdict}**` : ''} | ${escape(r.runs)} |`,
    );
  return out.join('\n');
}
