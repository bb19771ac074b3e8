/**
 * The named values on a game server's command line, in each form the games use:
 * `+rcon.port 28016` (Rust, Source: `+` sets a console variable), `-port=2302` (DayZ, Arma 3,
 * 7 Days to Die, Palworld, Zomboid's `-cachedir=`), `-port 27015` and `-servername x` (srcds,
 * Zomboid), `RCONPORT=21114` (Squad, as its Rcon.cfg comments show) and ARK's map URL
 * `TheIsland?listen?RCONEnabled=True?RCONPort=27020?ServerAdminPassword=…`. Names compare without
 * case; a later value wins, as the servers read their arguments in order.
 */
export interface CommandLineOption {
  /** The option as written, for the user: `+rcon.port`, `-RCONPort`, `?ServerAdminPassword`. */
  readonly shown: string;
  readonly value: string;
}

/** Options by lower-cased name without its prefix: `rcon.port`, `rconport`, `serveradminpassword`. */
export type CommandLineOptions = ReadonlyMap<string, CommandLineOption>;

export function commandLineOptions(argv: readonly string[]): CommandLineOptions {
  const options = new Map<string, CommandLineOption>();
  const put = (prefix: string, name: string, value: string) => {
    if (name !== '') options.set(name.toLowerCase(), { shown: `${prefix}${name}`, value: unquote(value) });
  };
  for (let i = 1; i < argv.length; i++) {
    const argument = argv[i]!;
    const next = argv[i + 1];
    const takesNext = next !== undefined && !/^[-+]/.test(next);
    if (argument.startsWith('+') && takesNext) {
      put('+', argument.slice(1), next);
      i++;
    } else if (argument.startsWith('-')) {
      const equals = argument.indexOf('=');
      if (equals > 0) put('-', argument.slice(1, equals), argument.slice(equals + 1));
      else if (takesNext && !next.includes('?')) {
        put('-', argument.slice(1), next);
        i++;
      }
    } else if (argument.includes('?')) {
      for (const part of argument.split('?').slice(1)) {
        const equals = part.indexOf('=');
        if (equals > 0) put('?', part.slice(0, equals), part.slice(equals + 1));
      }
    } else {
      const match = /^([A-Za-z][\w.]*)=(.*)$/s.exec(argument);
      if (match) put('', match[1]!, match[2]!);
    }
  }
  return options;
}

function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}
