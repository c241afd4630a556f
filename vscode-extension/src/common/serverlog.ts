// Server log: what the language server writes to stderr, as entries of the msmap
// log channel. vscode-languageclient passes each stderr chunk to the channel's
// append(), and a log channel makes an entry of every call: a chunk ending in a
// newline became an entry followed by an empty one, several lines one entry. Here
// each whole line becomes one entry, at the level the server gave it.
import * as vscode from 'vscode';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/** One line of `msmap lsp` logging: "2026-11-25 09:30:01,123 WARNING lsp.server: message". */
const SERVER_LINE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) (.*)$/;
const LEVELS: Record<string, LogLevel> = {
    DEBUG: 'debug',
    INFO: 'info',
    WARNING: 'warn',
    ERROR: 'error',
    CRITICAL: 'error',
};

/** Cuts a stream of chunks into whole lines; a chunk may end in the middle of one. */
export class LineSplitter {
    private rest = '';

    push(chunk: string): string[] {
        const lines = (this.rest + chunk).split(/\r?\n/);
        this.rest = lines.pop() ?? '';
        return lines;
    }
}

/**
 * The log entry for one stderr line: the server's level and its text without the
 * server's timestamp (the channel adds its own). A line in another format, such
 * as a traceback's, takes the level of the line before it.
 */
export function serverEntry(line: string, previous: LogLevel): { level: LogLevel; text: string } {
    const match = SERVER_LINE.exec(line);
    return match === null ? { level: previous, text: line } : { level: LEVELS[match[1]], text: match[2] };
}

/**
 * The channel to give the language client: the same channel, except that append()
 * (the server's stderr) makes one entry per whole line. Empty lines are dropped.
 */
export function serverLogChannel(channel: vscode.LogOutputChannel): vscode.LogOutputChannel {
    const lines = new LineSplitter();
    let level: LogLevel = 'info';
    const append = (chunk: string): void => {
        for (const line of lines.push(chunk)) {
            const entry = serverEntry(line, level);
            level = entry.level;
            if (entry.text.trim() !== '') {
                channel[entry.level](entry.text);
            }
        }
    };
    return new Proxy(channel, {
        get(target, property) {
            if (property === 'append') {
                return append;
            }
            const value: unknown = Reflect.get(target, property, target);
            return typeof value === 'function' ? ((value as (...args: unknown[]) => unknown).bind(target) as unknown) : value;
        },
    });
}
