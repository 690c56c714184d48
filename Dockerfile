# syntax=docker/dockerfile:1
# Build stage: compiles TypeScript and builds better-sqlite3's native addon against this image's Node.
FROM node:22-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
# npm ci runs the package's prepare script, which is the TypeScript build.
RUN npm ci && npm prune --omit=dev

# Runtime stage: no compiler, no dev dependencies, not root.
FROM node:22-bookworm-slim
ENV NODE_ENV=production \
    CALLHOOK_DATA_DIR=/data \
    PORT=8787 \
    HOST=0.0.0.0
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8787
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8787)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM reaches node directly (exec form), so the receiver drains and exits 0.
CMD ["node", "dist/cli/index.js", "serve"]
