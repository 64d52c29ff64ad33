# The gateway as a container: `docker build -t petstore-gateway .` then
# `docker run -p 4000:4000 -e PETSTORE_URL=… -e PLANTS_URL=… petstore-gateway`.
# Every setting of docs/configuration.md is an environment variable (NODE_ENV=production here:
# GraphiQL and introspection are off unless GRAPHIQL=true / INTROSPECTION=true).

# The base of every stage: the official Node.js image of the line the project ships and CI tests
# (.nvmrc; src/runtime.ts), on Debian 13 "trixie", slim. Trixie is Debian's stable release, with the
# Debian Security Team's fixes until 2028 and LTS until 2030; bookworm (Debian 12) left the security
# team in June 2026 and gets only the LTS team's, for fewer packages. Debian rather than Alpine: the
# heap and start flags below were measured with glibc's allocator, and musl builds of Node.js are
# experimental; slim, because the gateway needs no compiler or native addon, and fewer packages mean
# fewer findings for a scanner. The tag follows the line's releases: rebuild to take a security fix.

# Stage 1: bundle src/ into dist/ (`npm run build`: esbuild writes dist/builds/<id>/, main.js and its chunks
# with source maps, and dist/main.js imports it; see scripts/build-if-changed.js).
# The dev dependencies (esbuild, tsx) live and die here.
FROM node:26-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

# Stage 2: the production dependencies, installed exactly as the lock file says. None of them
# needs an install script, and skipping them keeps this stage from running code it downloaded.
FROM node:26-trixie-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# Stage 3: what runs. No npm cache, no dev dependencies, no TypeScript sources, no tests; an
# unprivileged user.
FROM node:26-trixie-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000
WORKDIR /app
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
# package.json's "type": "module" is what makes node load dist/*.js as ES modules; its folder is
# the project root, from which the gateway finds schema/.
COPY --chown=root:root package.json ./
# The SDL and the OpenAPI documents are read at start (the schema, the embedded emulator's contract),
# from schema/ beside package.json (src/project-files.ts).
COPY --chown=root:root schema ./schema
COPY --from=build --chown=root:root /app/dist ./dist
# The image's `node` user (uid 1000) owns nothing it runs: the code cannot be rewritten by the process.
USER node
EXPOSE 4000
# Liveness: yoga answers /health while the process serves requests. (Readiness, /readiness,
# checks the upstreams; that is the orchestrator's call to make, not a reason to restart.)
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 4000}/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM: refuse new connections, finish what is in flight (SHUTDOWN_GRACE_MS), exit 0.
STOPSIGNAL SIGTERM
# node is PID 1 and gets the signal itself (npm or a shell in between would not pass it on).
# Heap settings (docs/deploy.md, "Memory and start-up"): a young generation of 2 × 8 MB, an old
# generation that grows 30% past its live data between full collections, and optimizing
# compilation on the main thread (its memory then goes back to the one allocator that returns it).
# Add -e NODE_OPTIONS=--enable-source-maps for stack traces that name src/*.ts lines.
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=30", "--no-concurrent-recompilation", "--no-node-snapshot", "--no-sparkplug", "--no-maglev", "dist/main.js"]
