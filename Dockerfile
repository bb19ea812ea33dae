# Build stage: compile TypeScript with the dev dependencies.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ormconfig.ts ./
COPY src ./src
COPY bench ./bench
COPY test/support ./test/support
# The dashboard single-page app: built by `npm run build` into dist/dashboard.
COPY dashboard ./dashboard
RUN npm run build && npm prune --omit=dev --omit=optional

# Runtime stage: compiled code and production dependencies only, as a non-root user.
# The image expects DATABASE_URL (see docker-compose.yml); the embedded PostgreSQL is
# for running from a checkout without a database server.
FROM node:24-bookworm-slim
ENV NODE_ENV=production PORT=8787
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
USER node
EXPOSE 8787
HEALTHCHECK --interval=10s --timeout=3s --retries=5 CMD node -e "fetch('http://127.0.0.1:8787/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/src/main.js"]
