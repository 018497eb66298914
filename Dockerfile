# One image for every estuary role; the service's command picks the role. The install is the one
# README.md describes ("What each role needs"): `npm ci --omit=dev`, or, for an image that only
# runs the worker-node commands (mount, umount, discover, agent), without the optional packages:
#   docker build --build-arg NPM_OMIT="dev optional" -t estuary-worker .
# The compiler that rebuilds the FUSE addon (scripts/patch-fuse-native.sh) and builds the
# gateway's addons (scripts/build-native.sh, lib/native: file mappings, socket options) stays in
# the build stage; the image gets the built node_modules and the built addons only.
FROM node:24-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/estuary
COPY package.json package-lock.json .npmrc ./
COPY scripts/patch-fuse-native.sh scripts/build-native.sh scripts/node-gyp.sh scripts/
COPY lib/native/binding.gyp lib/native/*.c lib/native/
ARG NPM_OMIT="dev"
RUN npm ci $(for o in $NPM_OMIT; do printf -- '--omit=%s ' "$o"; done)

FROM node:24-bookworm-slim
# fuse: fusermount for `estuary mount`; ca-certificates: HTTPS upstreams and S3 endpoints;
# slurm-client: squeue/sinfo/scontrol for `estuary coordinator`.
RUN apt-get update \
 && apt-get install -y --no-install-recommends fuse ca-certificates slurm-client \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/estuary
COPY --from=build /opt/estuary/node_modules/ node_modules/
COPY package.json package-lock.json ./
COPY bin/ bin/
COPY cli/ cli/
COPY lib/ lib/
COPY --from=build /opt/estuary/lib/native/build/Release/*.node lib/native/build/Release/
COPY gateway/ gateway/
COPY agent/ agent/
COPY discovery/ discovery/
COPY fuse/ fuse/
COPY bench/ bench/
COPY coordinator/ coordinator/
COPY stage/ stage/
COPY deploy/ deploy/
USER root
ENTRYPOINT ["node", "bin/estuary.js"]
