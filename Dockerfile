# skillflow: one image for the API (the default command), the Temporal worker and the codec (compose overrides the
# command with `sh scripts/worker.sh`, worker/main.ts with its memory settings, or `lib/codec/main.ts`). TypeScript runs
# through tsx; the web app it serves at /app is built in a stage of its own.

# The web app (web/, Vite): built with the dev dependencies here; only web/dist reaches the image.
FROM node:20-slim AS web
WORKDIR /build
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts && npm cache clean --force
COPY . .
RUN node node_modules/vite/bin/vite.js build --config web/vite.config.mts

FROM node:20-slim

ENV NODE_ENV=production
WORKDIR /app

# Dependencies first, so a source change does not reinstall them. `npm ci` installs exactly package-lock.json.
# No dependency install scripts run: --ignore-scripts here, and package.json's allowScripts denies them under npm 11.
# None is needed: the native parts (Temporal's core bridge, esbuild for tsx, swc for the workflow bundler) ship
# prebuilt, as files in the package or as platform packages (@esbuild/linux-*, @swc/core-linux-*).
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# Source and skills, owned by root and read-only to the app user.
COPY . .
COPY --from=web /build/web/dist ./web/dist

# /data is SKILLFLOW_DATA_DIR in compose: a volume shared by the worker and the API. Creating it here, owned by the
# app user, gives a new named volume the same owner. /app/skills (SKILLFLOW_SKILLS_DIR) exists even when the
# checkout has no skills yet (git keeps no empty folders); mount your own library over it if you like.
RUN mkdir -p /data /secrets /app/skills && chown node:node /data /secrets && chmod 700 /secrets

# The official node image's unprivileged user (uid 1000).
USER node

EXPOSE 3000
CMD ["node", "--import", "tsx", "api/server.ts"]
