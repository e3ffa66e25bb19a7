# Daybook: one container, the books in the /data volume, configuration by environment only.
#
# The Node.js release is pinned here, in both FROM lines, and nowhere else: CI reads it from this
# file (.ci/node-version) and runs the tests, the benchmarks and this image on it. To move to a
# newer Node 24, change both lines; CI then proves it.

# Build stage: compile TypeScript, then keep production modules only. The SQLite driver is an
# N-API module whose binaries come inside its package: nothing is compiled, so no toolchain;
# its C sources and the other platforms' binaries are dropped from what the image carries.
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY config ./config
COPY src ./src
RUN npm ci \
    && npm prune --omit=dev \
    && rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src node_modules/better-sqlite3/binding.gyp \
    && find node_modules/better-sqlite3/prebuilds -type f ! -name "linux-$(node -p process.arch).node" -delete

# Final stage: the compiled service and its production modules, run as an unprivileged user.
FROM node:24.21.0-bookworm-slim
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
    && chown node:node /data \
    && chmod 700 /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "--max-semi-space-size=8", "bin/daybook.js", "serve"]
