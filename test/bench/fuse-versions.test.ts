import { describe, expect, it } from 'vitest';
import { versionFrom } from '../../bench/fuse/mounts.ts';

describe('versionFrom', () => {
  it('reduces a peer banner to name and version', () => {
    expect(
      versionFrom(
        's3fs',
        'Amazon Simple Storage Service File System V1.90 (commit:unknown) with GnuTLS(gcrypt)',
      ),
    ).toBe('s3fs 1.90');
    expect(versionFrom('rclone', 'rclone v1.60.1-DEV\n- os/version: debian 12')).toBe('rclone 1.60.1-DEV');
    expect(versionFrom('goofys', 'goofys version 0.24.0-45b8d78375af1b24604439d2e60c567654bcdf88')).toBe(
      'goofys 0.24.0-45b8d78375af1b24604439d2e60c567654bcdf88',
    );
    expect(versionFrom('x', 'no digits')).toBe('x (version unknown)');
  });
});
