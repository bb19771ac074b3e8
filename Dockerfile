# syntax=docker/dockerfile:1
# porter as a container, e.g. beside itzg/minecraft-server (docker-compose.example.yml).
# Guide: docs/install.md#container.
#
# Base: any Debian-based Node.js image of 20.18 or newer; the default is the official
# node:24-slim (why: docs/contributing.md#dependencies-and-why-each). Debian rather than alpine:
# tini comes from Debian with apt-get, glibc is what Node's own builds are made and tested on, and
# a script executor's delivery scripts get a /bin/sh. Pin it by digest in production
# (docker build --build-arg NODE_IMAGE=node:24-slim@sha256:...).
ARG NODE_IMAGE=node:24-slim

# ---- build: compile TypeScript with the dev dependencies ----
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# npm uses whatever registry the building machine is set up for (a mirror, a private registry and
# its credentials): hand in that machine's npmrc as the build secret "npmrc"
# (--secret id=npmrc,src=$HOME/.npmrc). A secret is mounted for this step only and never stored in
# a layer; without one npm uses its public registry.
# --ignore-scripts: "prepare" would run tsc before the sources are here.
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc \
    npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY scripts ./scripts
RUN npm run build

# ---- runtime: exactly the files the npm package ships (it depends on nothing: the bundle holds every library) ----
FROM ${NODE_IMAGE} AS runtime
# tini from Debian (/usr/bin/tini) is PID 1; apt's lists and caches are dropped in the same layer.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /etc/porter /var/lib/porter \
 && chown node:node /var/lib/porter \
 && chmod 0700 /var/lib/porter
WORKDIR /opt/porter
ENV NODE_ENV=production
COPY package.json ./
COPY --from=build /src/dist/bundle ./dist/bundle
COPY config.example.json config.schema.json ./
COPY systemd ./systemd
# The docs ship with the package (the unit's Documentation= names them): the image has what npm installs.
COPY docs ./docs

# The config is mounted read-only at /etc/porter/config.json and sets "stateDir": "/var/lib/porter"
# (a volume, so the journal survives the container). Secrets: PORTER_API_TOKEN /
# PORTER_RCON_PASSWORD, or files under /run/secrets named by api.tokenFile / passwordFile.
ENV PORTER_CONFIG=/etc/porter/config.json
VOLUME ["/var/lib/porter"]
USER node

# /healthz needs "health": {"listen": "127.0.0.1:9464"} (or 0.0.0.0:9464 for Prometheus) in the
# config; PORTER_HEALTH_PORT follows a different port. node's fetch, so no curl in the image.
ENV PORTER_HEALTH_PORT=9464
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORTER_HEALTH_PORT + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# tini is PID 1: it forwards SIGTERM to porter and reaps the orphans delivery scripts leave.
# porter drains for shutdown.drainMs (10 s) after SIGTERM: give it `stop_grace_period: 30s`
# (compose) or `docker stop -t 30`, since Docker's default of 10 s would cut the drain short.
STOPSIGNAL SIGTERM
# The same node flags as the bin's shebang (why: src/cli/main.ts).
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--max-semi-space-size=16", "--no-allocation-site-pretenuring", "--heap-growing-percent=50", "/opt/porter/dist/bundle/porter.js"]
CMD ["run"]

# OCI annotations (github.com/opencontainers/image-spec, annotations.md), last so that a new
# revision rebuilds no layer. The version default is package.json's (a test keeps them equal);
# pass the commit: --build-arg PORTER_REVISION=$(git rev-parse HEAD).
ARG NODE_IMAGE
ARG PORTER_VERSION=0.1.0
ARG PORTER_REVISION=unknown
ARG PORTER_SOURCE=https://github.com/porter-connector/porter
LABEL org.opencontainers.image.title="porter" \
      org.opencontainers.image.description="Delivers a game store's purchases to the game server, exactly once" \
      org.opencontainers.image.version="${PORTER_VERSION}" \
      org.opencontainers.image.revision="${PORTER_REVISION}" \
      org.opencontainers.image.source="${PORTER_SOURCE}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"
