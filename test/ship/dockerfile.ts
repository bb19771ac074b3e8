/**
 * A small Dockerfile reader for the packaging tests: joins continuation lines, drops comments,
 * splits the file into stages. Enough for the repository's own Dockerfile, not a general parser.
 */

export interface Instruction {
  readonly keyword: string;
  readonly args: string;
  readonly line: number;
}

export interface Stage {
  readonly from: string;
  readonly name: string | undefined;
  readonly instructions: Instruction[];
}

export function parseDockerfile(text: string): { args: Instruction[]; stages: Stage[] } {
  const instructions: Instruction[] = [];
  let pending = '';
  let startLine = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trimEnd();
    if (pending === '' && (line.trim() === '' || line.trimStart().startsWith('#'))) return;
    if (pending !== '' && line.trimStart().startsWith('#')) return;
    if (pending === '') startLine = index + 1;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      return;
    }
    const full = (pending + line).trim();
    pending = '';
    const space = full.search(/\s/);
    instructions.push({ keyword: full.slice(0, space).toUpperCase(), args: full.slice(space + 1).trim(), line: startLine });
  });
  const args: Instruction[] = [];
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const [from, as, name] = instruction.args.split(/\s+/);
      stages.push({ from: from!, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else if (stages.length === 0) {
      args.push(instruction);
    } else {
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return { args, stages };
}

/** The words of an instruction's arguments, dropping --flags. JSON (exec) form is decoded. */
export function words(args: string): { flags: Record<string, string>; words: string[] } {
  const flags: Record<string, string> = {};
  let rest = args;
  for (let m = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(rest); m; m = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(rest)) {
    flags[m[1]!] = m[2] ?? 'true';
    rest = rest.slice(m[0].length);
  }
  if (rest.startsWith('[')) return { flags, words: JSON.parse(rest) as string[] };
  return { flags, words: rest.split(/\s+/).filter(Boolean) };
}

/** Every `COPY` of a stage as sources → destination (made absolute against WORKDIR). */
export function copies(stage: Stage): { from: string | undefined; sources: string[]; dest: string; line: number }[] {
  let workdir = '/';
  const out: { from: string | undefined; sources: string[]; dest: string; line: number }[] = [];
  for (const instruction of stage.instructions) {
    if (instruction.keyword === 'WORKDIR') workdir = resolvePath(workdir, instruction.args);
    if (instruction.keyword !== 'COPY') continue;
    const { flags, words: parts } = words(instruction.args);
    const dest = parts.at(-1)!;
    out.push({ from: flags.from, sources: parts.slice(0, -1), dest: resolvePath(workdir, dest), line: instruction.line });
  }
  return out;
}

function resolvePath(base: string, path: string): string {
  const joined = path.startsWith('/') ? path : `${base.replace(/\/$/, '')}/${path}`;
  const parts: string[] = [];
  for (const part of joined.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return `/${parts.join('/')}${path.endsWith('/') && parts.length > 0 ? '/' : ''}`;
}
