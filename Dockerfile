# countersign: docker build -t countersign .
#   docker run -p 7470:7470 -v countersign-data:/data -e COUNTERSIGN_ADMIN_TOKEN=... countersign
# test/deploy/dockerfile.test.ts performs these steps without Docker: keep the two in step.
# The image runs the current Node.js LTS (26); the code also runs on Node 20, 22 and 24
# (package.json engines).

# ---- build: dependencies (native better-sqlite3 included), TypeScript, then drop dev deps ----
FROM node:26-trixie-slim AS build
# better-sqlite3 compiles its binding from source when no prebuilt one is available.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Manifests first: the dependency layer is rebuilt only when they change.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# public/ is created if absent so the runtime COPY below never fails.
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && mkdir -p public

# ---- runtime: only what `serve` needs, as the unprivileged node user ----
FROM node:26-trixie-slim AS runtime
ENV NODE_ENV=production \
    COUNTERSIGN_HOST=0.0.0.0 \
    COUNTERSIGN_DATA_DIR=/data
WORKDIR /app
# Code stays owned by root: the daemon can read it but never change it.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/migrations ./migrations
COPY --from=build /app/config ./config
COPY --from=build /app/public ./public
# The database, its WAL files and the generated admin token live here (keep it on a local volume).
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 7470
# The address comes from the daemon's own configuration (COUNTERSIGN_PORT, or a config file named
# by COUNTERSIGN_CONFIG), so the check follows the port wherever it is set.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["node", "-e", "import('./dist/config.js').then(({loadConfig})=>{const c=loadConfig(),h=c.host==='0.0.0.0'||c.host==='::'?'127.0.0.1':c.host.includes(':')?'['+c.host+']':c.host;return fetch('http://'+h+':'+c.port+'/v1/health')}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# countersign handles SIGTERM itself (it runs as PID 1 without an init): it answers open
# long-polls, closes WebSockets with 1001 and closes the database before exiting 0.
STOPSIGNAL SIGTERM
CMD ["node", "dist/cli.js", "serve"]
