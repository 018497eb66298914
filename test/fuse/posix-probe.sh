#!/usr/bin/env bash
# POSIX probes for the comparison table in docs/SEMANTICS.md: run in a mounted directory (estuary,
# s3fs, rclone, goofys...), one line per probe, "ok <output>" or "FAIL <error>". Not part of CI,
# which cannot count on the peers being installed; see docs/SEMANTICS.md for how it was run.
#   bash test/fuse/posix-probe.sh MOUNTED_DIR
set -u
cd "$1" || exit 1
p() { local name="$1"; shift; if out=$("$@" 2>&1); then echo "$name: ok $out"; else echo "$name: FAIL $(echo "$out" | tail -1 | sed 's/.*: //')"; fi; }
p mkfifo mkfifo fifo
p mknod-c mknod cdev c 1 3
p ln-hard bash -c 'echo x > hf && ln hf hl'
p symlink ln -s target sl
p chmod-own bash -c 'echo x > cm && chmod 600 cm && stat -c %a cm'
echo y > mt; touch -d '2020-01-02 03:04:05' mt
p rename-mtime bash -c 'mv mt mt2 && stat -c %Y mt2'
echo z > mc; touch -d '2020-01-02 03:04:05' mc
p chmod-mtime bash -c 'chmod 640 mc && stat -c %Y mc'
p append bash -c 'echo a > ap && echo b >> ap && cat ap | tr "\n" ,'
p randwrite bash -c 'printf hello > rw && printf J | dd of=rw bs=1 seek=1 conv=notrunc status=none && cat rw'
p truncate bash -c 'printf abcdef > tr && truncate -s 3 tr && cat tr'
p unlink-open bash -c 'head -c 100000 /dev/urandom > uo && exec 3< uo && rm uo && wc -c <&3'
p rename-dir bash -c 'mkdir -p rd/sub && echo 1 > rd/sub/f && mv rd rd2 && cat rd2/sub/f'
p rmdir-nonempty bash -c 'mkdir ne && echo 1 > ne/f && rmdir ne'
