// `estuary umount MOUNTPOINT`: unmounts an estuary (or any FUSE) mount. The mount process notices
// and exits. A plain unmount refuses while files are open, so nothing being written is cut off;
// --lazy detaches at once and lets open files finish.

import { defineCommand } from '../lib/command.ts';
import { option } from '../lib/config/options.ts';
import { bool } from '../lib/config/values.ts';
import { fsErrors } from './errors.ts';
import { canonicalPath, isMounted, unmountPath } from './mount-table.ts';

export const command = defineCommand({
  name: 'umount',
  summary: 'unmount a bucket mounted with `estuary mount`',
  description: `
Runs fusermount -u (or umount) on MOUNTPOINT. The \`estuary mount\` process serving it sees the
unmount and exits. Refuses while files under MOUNTPOINT are open, unless --lazy.`,
  positionals: [{ name: 'MOUNTPOINT', describe: 'where the bucket is mounted' }],
  examples: [
    { cmd: 'estuary umount /mnt/kek', what: 'unmount; fails while files are open' },
    { cmd: 'estuary umount --lazy /mnt/kek', what: 'detach now; open files finish first' },
  ],
  options: {
    lazy: option(bool(), false, 'detach now and let files still open finish (fusermount -uz)'),
  },
  async run({ config, args, log }) {
    const path = args[0]!;
    // /proc/mounts and fusermount know the real path, not one through a symlink.
    const target = await canonicalPath(path);
    if (!(await isMounted(target))) throw fsErrors.notMounted(path);
    const result = await unmountPath(target, config.lazy);
    if (!result.ok) throw fsErrors.umountFailed(path, result.output || 'unknown error');
    log.info({ mountpoint: path }, 'unmounted');
    return 0;
  },
});
