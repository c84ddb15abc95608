# Session Archive — container image. UNTESTED here: no Docker engine runs on our build machines
# (see README, "Operations"). node:24-slim, npm ci, build, `node dist/src/main.js`.

# --- build: full dependencies, generated code (Prisma client, GraphQL types), TypeScript → dist
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build

# --- runtime: production dependencies, compiled code, the GraphQL schema and the migrations
FROM node:24-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/schema.graphql ./schema.graphql
COPY --from=build /app/schema.changelog.json ./schema.changelog.json
COPY --from=build /app/prisma ./prisma
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD node -e "require('http').get('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz',r=>process.exit(r.statusCode===200?0:1)).on('error',()=>process.exit(1))"
# exec form: SIGTERM reaches node itself, which drains in-flight requests and exits 0.
CMD ["node", "dist/src/main.js"]
