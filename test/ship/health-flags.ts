import { parseDockerfile, words } from './dockerfile.js';
import { readRepoFile } from './repo.js';

/**
 * The Dockerfile's HEALTHCHECK as `podman run` / `docker run` flags: the release's OCI archive has
 * no HEALTHCHECK (the OCI image config has no such field), so an owner who loads it adds the same
 * check on the run line (docs/install.md#container) or in Compose (docker-compose.example.yml).
 * Returns [--health-cmd, command, --health-interval, …] in the Dockerfile's order of its flags.
 */
export function healthFlags(): string[] {
  const runtime = parseDockerfile(readRepoFile('Dockerfile')).stages.at(-1)!;
  const instruction = runtime.instructions.filter((i) => i.keyword === 'HEALTHCHECK').at(-1);
  if (!instruction) throw new Error("the Dockerfile's runtime stage has no HEALTHCHECK");
  const { flags, words: command } = words(instruction.args);
  if (command[0] !== 'CMD') throw new Error(`HEALTHCHECK ${instruction.args} is not CMD [...]`);
  const exec = JSON.parse(instruction.args.slice(instruction.args.indexOf('CMD') + 3).trim()) as string[];
  if (exec.length !== 3 || exec[0] !== 'node' || exec[1] !== '-e' || exec[2]!.includes('"'))
    throw new Error(`HEALTHCHECK CMD ${JSON.stringify(exec)} is not node -e "<script without double quotes>"`);
  return [
    // The shell form docs/install.md gives (a string runs under the image's /bin/sh -c).
    '--health-cmd',
    `node -e "${exec[2]!}"`,
    ...Object.entries(flags).flatMap(([name, value]) => [`--health-${name}`, value]),
  ];
}
