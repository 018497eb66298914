# One image for every estuary role; the service's command picks the role.
FROM node:24-bookworm-slim
# fuse: fusermount for `estuary mount`; ca-certificates: HTTPS upstreams and S3 endpoints;
# python3, make, g++: npm ci rebuilds the FUSE addon (scripts/patch-fuse-native.sh);
# slurm-client: squeue/sinfo/scontrol for `estuary coordinator`.
RUN apt-get update \
 && apt-get install -y --no-install-recommends fuse ca-certificates python3 make g++ slurm-client \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/estuary
COPY package.json package-lock.json .npmrc ./
COPY scripts/patch-fuse-native.sh scripts/
RUN npm ci --omit=dev
COPY bin/ bin/
COPY cli/ cli/
COPY lib/ lib/
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
