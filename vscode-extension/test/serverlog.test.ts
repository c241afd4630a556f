import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { CrashCounter, CRASH_WINDOW_MS, isNormalExit, MAX_AUTOMATIC_RESTARTS } from '../src/common/server';
import { LineSplitter, serverEntry, serverLogChannel } from '../src/common/serverlog';

describe('server stderr in the log channel', () => {
    it('cuts chunks into whole lines, keeping a cut line for the next chunk', () => {
        const lines = new LineSplitter();
        assert.deepEqual(lines.push('first\nsec'), ['first']);
        assert.deepEqual(lines.push('ond\r\nthird\n'), ['second', 'third']);
        assert.deepEqual(lines.push(''), []);
    });

    it("takes the server's level and drops its timestamp; other lines keep the level before them", () => {
        assert.deepEqual(serverEntry('2026-11-25 09:30:01,123 WARNING lsp.server: slow', 'info'),
            { level: 'warn', text: 'lsp.server: slow' });
        assert.deepEqual(serverEntry('2026-11-25 09:30:01,123 CRITICAL x: y', 'info'), { level: 'error', text: 'x: y' });
        assert.deepEqual(serverEntry('Traceback (most recent call last):', 'error'),
            { level: 'error', text: 'Traceback (most recent call last):' });
    });

    it('makes one entry per line, with no empty entries, and leaves the other methods alone', () => {
        const entries: string[] = [];
        const record = (level: string) => (text: string): void => void entries.push(`${level} ${text}`);
        const channel = {
            info: record('info'), warn: record('warn'), error: record('error'), debug: record('debug'),
            trace: record('trace'), name: 'msmap',
        };
        const wrapped = serverLogChannel(channel as never);
        wrapped.append('2026-11-25 09:30:01,123 INFO lsp.server: one\n\n2026-11-25 09:30:01,124 ERROR lsp.ser');
        wrapped.append('ver: two\n  detail\n');
        wrapped.info('from the client');
        assert.equal(wrapped.name, 'msmap');
        assert.deepEqual(entries, ['info lsp.server: one', 'error lsp.server: two', 'error   detail',
            'info from the client']);
    });
});

describe('server exits', () => {
    it('knows a normal exit from a crash', () => {
        assert.equal(isNormalExit('Server process exited with code 0.'), true);
        assert.equal(isNormalExit('Server process exited with code 1.'), false);
        assert.equal(isNormalExit('Server process exited with signal SIGKILL.'), false);
    });

    it('restarts a crashed server, but not one that keeps crashing', () => {
        const crashes = new CrashCounter();
        const answers = Array.from({ length: MAX_AUTOMATIC_RESTARTS + 1 }, (_, i) => crashes.crashed(i * 1000));
        assert.deepEqual(answers, [...new Array<boolean>(MAX_AUTOMATIC_RESTARTS).fill(true), false]);
        // Once the earlier crashes are old enough, it restarts again.
        assert.equal(crashes.crashed(MAX_AUTOMATIC_RESTARTS * 1000 + CRASH_WINDOW_MS), true);
    });
});
