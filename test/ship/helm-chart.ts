/**
 * What the itzg/minecraft-server Helm chart does with a values file, for the parts porter's values
 * use, taken from the chart as published (itzg/minecraft-server-charts, charts/minecraft, chart
 * version 5.1.2, commit cd3d7109b40c6116224121794a21a1d2e8046c3a): its values.yaml defaults,
 * templates/_helpers.tpl (minecraft.fullname; tplRender runs a value through `tpl` when it holds
 * "{{"), templates/secrets.yaml (the RCON Secret <fullname>-rcon, key rcon-password, unless
 * existingSecret), templates/deployment.yaml (the pod: labels and podLabels; the game container's
 * RCON_PASSWORD from that Secret; volumes tmp, datadir (a claim when persistence.dataDir is
 * enabled, else an emptyDir), backupdir, then extraVolumes[].volumes as they are (not templates);
 * sidecarContainers and extraDeploy rendered with tplRender). No helm runs here, so this renders
 * those parts the same way, with a template evaluator for the few expressions porter's values use:
 * any other expression is an error, never silently left as text.
 */

type Values = Record<string, unknown>;

/** The chart's values.yaml defaults for the keys porter's values set or its templates read. */
export const CHART_DEFAULTS: Values = {
  image: { repository: 'itzg/minecraft-server', tag: 'latest' },
  strategyType: 'Recreate',
  workloadAsStatefulSet: false,
  podSecurityContext: { runAsUser: 1000, runAsGroup: 3000, runAsNonRoot: true, fsGroup: 2000, seccompProfile: { type: 'RuntimeDefault' } },
  minecraftServer: {
    eula: 'FALSE',
    rcon: {
      enabled: false,
      withGeneratedPassword: false,
      port: 25575,
      password: 'CHANGEME!',
      existingSecret: null,
      secretKey: 'rcon-password',
    },
  },
  persistence: { dataDir: { enabled: false, Size: '1Gi' } },
  podLabels: {},
  sidecarContainers: [],
  extraVolumes: [],
  extraDeploy: [],
};

/** Every values path the chart defines among those above (values.yaml), for catching a misspelt key. */
export function chartPaths(values: Values = CHART_DEFAULTS, prefix = ''): string[] {
  return Object.entries(values).flatMap(([key, value]) => {
    const path = `${prefix}${key}`;
    const isMap = value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0;
    return isMap ? [path, ...chartPaths(value as Values, `${path}.`)] : [path];
  });
}

export function merge(base: Values, over: Values): Values {
  const out: Values = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const old = out[key];
    const bothMaps = [old, value].every((v) => v !== null && typeof v === 'object' && !Array.isArray(v));
    out[key] = bothMaps ? merge(old as Values, value as Values) : value;
  }
  return out;
}

function lookup(values: Values, path: string): unknown {
  return path.split('.').reduce<unknown>((node, key) => (node as Values | undefined)?.[key], values);
}

/** minecraft.fullname: the release name when it contains the chart's name, else <release>-minecraft. */
export function fullname(release: string): string {
  return (release.includes('minecraft') ? release : `${release}-minecraft`).slice(0, 63).replace(/-$/, '');
}

interface Scope {
  readonly values: Values;
  readonly release: string;
}

/** One `{{ … }}` expression: terms, parenthesised calls, and `|` pipes into default and quote. */
function evaluate(expression: string, scope: Scope): string {
  const tokens = expression.match(/"(?:[^"\\]|\\.)*"|\(|\)|\||[^\s()|]+/g) ?? [];
  let at = 0;
  const next = () => tokens[at++];
  const term = (): string => {
    const token = next();
    if (token === undefined) throw new Error(`template: "${expression}" ends early`);
    if (token === '(') {
      const value = pipeline();
      if (next() !== ')') throw new Error(`template: unbalanced "${expression}"`);
      return value;
    }
    if (token.startsWith('"')) return JSON.parse(token) as string;
    if (token.startsWith('.Values.')) {
      const value = lookup(scope.values, token.slice('.Values.'.length));
      if (value === null || value === undefined) return '';
      if (typeof value === 'string') return value;
      if (typeof value === 'number' || typeof value === 'boolean') return `${value}`;
      throw new Error(`template: ${token} is not a scalar`);
    }
    if (token === '.Release.Name') return scope.release;
    if (token === 'include' || token === 'template') {
      const name = JSON.parse(next()!) as string;
      if (next() !== '.' || name !== 'minecraft.fullname') throw new Error(`template: unknown ${token} ${name}`);
      return fullname(scope.release);
    }
    if (token === 'printf') {
      const format = JSON.parse(next()!) as string;
      if (format !== '%s-rcon') throw new Error(`template: unknown printf ${format}`);
      return format.replace('%s', term());
    }
    throw new Error(`template: unknown term ${token} in "${expression}"`);
  };
  const pipeline = (): string => {
    let value = term();
    while (tokens[at] === '|') {
      at++;
      const fn = next();
      if (fn === 'default') {
        const fallback = term();
        value = value === '' ? fallback : value;
      } else if (fn === 'quote') value = JSON.stringify(value);
      else throw new Error(`template: unknown function ${fn}`);
    }
    return value;
  };
  const result = pipeline();
  if (at !== tokens.length) throw new Error(`template: "${expression}" has more than one pipeline`);
  return result;
}

/** Helm's `tpl` of a string, for the expressions above. */
export function tpl(text: string, scope: Scope): string {
  return text.replace(/{{-?\s*(.*?)\s*-?}}/g, (_, inner: string) => evaluate(inner, scope));
}
