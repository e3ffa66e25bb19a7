# Daybook: one container, the books in the /data volume, configuration by environment only.

# Build stage: compile TypeScript and the native SQLite module, then keep production modules only.
FROM node:24-bookworm-slim AS build
WORKDIR /app
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 make g++ \
    && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY config ./config
COPY db ./db
COPY jobs ./jobs
COPY src ./src
RUN npm ci \
    && npm prune --omit=dev

# Final stage: the compiled service and its production modules, run as an unprivileged user.
FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    DAYBOOK_DB=/data/daybook.sqlite \
    DAYBOOK_BACKUP_DIR=/data/backups \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY --from=build /app/config ./config
RUN ln -s /app/bin/daybook.js /usr/local/bin/daybook \
    && mkdir -p /data \
    && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "bin/daybook.js", "serve"]
