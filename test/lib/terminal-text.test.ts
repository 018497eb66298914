import { expect, test } from 'vitest';
import { prettyMessage } from '../../lib/log.ts';
import { terminalSafe } from '../../lib/terminal-text.ts';

test('terminalSafe replaces C0 and C1 controls, keeps the rest', () => {
  expect(terminalSafe('s3://kek/\u001b]0;owned\u0007\u001b[2J\u009b1m é ✓')).toBe('s3://kek/?]0;owned??[2J?1m é ✓');
});

test('a pretty log line shows no control character of the message', () => {
  expect(prettyMessage({ role: 'coordinator', msg: 'need s3://x/\u001b[2J' }, 'msg')).toBe('coordinator: need s3://x/?[2J');
});
