# syntax=docker/dockerfile:1

# Build stage: dev dependencies, which never reach the runtime image.
FROM node:26-slim AS build
WORKDIR /app
ENV SCARF_ANALYTICS=false
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
RUN npm run build
# The production tree, with the SQLite driver's prebuilt Node-API binary for this platform.
RUN npm prune --omit=dev --no-audit --no-fund

# Runtime stage: production dependencies and the compiled service only.
FROM node:26-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
# pt-online-schema-change, with which the migrations change a large table on a Galera cluster
# without holding the cluster's writes (docs/scaling.md, "Schema changes").
RUN apt-get update \
    && apt-get install -y --no-install-recommends percona-toolkit \
    && rm -rf /var/lib/apt/lists/*
# Code stays owned by root, so the service cannot rewrite itself; only data/ is writable.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The default SQLite file is data/plant-store.sqlite; mount a volume here to keep it.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
# API, and the Prometheus metrics listener (METRICS_PORT).
EXPOSE 3000 9464
# No curl in the slim image: node's built-in fetch probes liveness on the configured port.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The command of `npm run start:prod` (docs/performance.md). Without the first flag V8 moves the
# objects of in-flight requests straight into the old generation, where only full collections free
# them: more memory and more CPU per request. The second sizes the heap to the service (a live set
# of about 40 MB) rather than to the host: V8 sizes its limit from the host's memory and, with a
# large limit, lets the heap grow to four times the live set before its first full collection under
# load (resident memory near 240 MB instead of 150 MB). The last two let V8 optimize a function
# after a tenth of the calls it waits for by default (docs/performance.md, "Warm-up"): the
# framework's many small functions on a request's path are optimized in the first seconds under
# load instead of its first minute, so a new instance serves at full speed from its first requests.
CMD ["node", "--no-allocation-site-pretenuring", "--max-old-space-size=512", "--max-semi-space-size=8", "--invocation-count-for-maglev=50", "--invocation-count-for-turbofan=300", "dist/main.js"]
