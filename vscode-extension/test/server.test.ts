import { strict as assert } from 'node:assert';
import { beforeEach, describe, it } from 'node:test';
import {
    expandVariables,
    formatCommand,
    LanguageServer,
    RestartQueue,
    serverLaunch,
    startFailureMessage,
    usesSelectedInterpreter,
} from '../src/common/server';
import { clients, events, stub } from './stubs/vscode-languageclient/node';
import { configuration, notifications } from './stubs/vscode';

const vars = { userHome: '/home/ada', workspaceFolder: '/work/project' };
const noLaunchSettings = { command: [], pythonPath: '' };

/** A promise with its resolve and reject functions. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } {
    let resolve!: () => void;
    let reject!: (error: Error) => void;
    const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
    });
    return { promise, resolve, reject };
}

describe('server launch command', () => {
    it('runs `python3 -m kb lsp` when nothing is configured', () => {
        assert.deepEqual(serverLaunch(noLaunchSettings, undefined, vars), {
            command: 'python3', args: ['-m', 'kb', 'lsp'], source: 'default',
        });
        assert.equal(usesSelectedInterpreter(noLaunchSettings), true);
    });

    it('prefers the interpreter selected in the Python extension to python3', () => {
        assert.deepEqual(serverLaunch(noLaunchSettings, '/envs/ms/bin/python', vars), {
            command: '/envs/ms/bin/python', args: ['-m', 'kb', 'lsp'], source: 'Python extension',
        });
    });

    it('prefers msmap.server.pythonPath to the selected interpreter', () => {
        const launch = { command: [], pythonPath: '${workspaceFolder}/.venv/bin/python' };
        assert.deepEqual(serverLaunch(launch, '/envs/ms/bin/python', vars), {
            command: '/work/project/.venv/bin/python', args: ['-m', 'kb', 'lsp'], source: 'server.pythonPath',
        });
        assert.equal(usesSelectedInterpreter(launch), false);
    });

    it('runs msmap.server.command as given, over everything else', () => {
        const launch = { command: ['~/bin/msmap', 'lsp'], pythonPath: '/usr/bin/python3' };
        assert.deepEqual(serverLaunch(launch, '/envs/ms/bin/python', vars), {
            command: '/home/ada/bin/msmap', args: ['lsp'], source: 'server.command',
        });
        assert.equal(usesSelectedInterpreter(launch), false);
    });

    it('expands variables but leaves other text alone', () => {
        assert.equal(expandVariables('~', vars), '/home/ada');
        assert.equal(expandVariables('${userHome}/py', vars), '/home/ada/py');
        assert.equal(expandVariables('a~/b', vars), 'a~/b');
        assert.equal(expandVariables('~bob/py', vars), '~bob/py');
        assert.equal(expandVariables('${workspaceFolder}/x', { userHome: '/h' }), '${workspaceFolder}/x');
    });

    it('quotes arguments with spaces when showing the command', () => {
        const launch = serverLaunch({ command: [], pythonPath: '/opt/my env/python' }, undefined, vars);
        assert.equal(formatCommand(launch), '"/opt/my env/python" -m kb lsp');
    });

    it('tells how to install msmap when the server does not start', () => {
        for (const launch of [
            serverLaunch(noLaunchSettings, undefined, vars),
            serverLaunch({ command: ['msmap', 'lsp'], pythonPath: '' }, undefined, vars),
        ]) {
            const message = startFailureMessage(launch);
            assert.match(message, /pip install msmap/);
            assert.match(message, /pip install -e /);
            assert.ok(message.includes(formatCommand(launch)));
        }
        assert.match(startFailureMessage(serverLaunch({ command: ['msmap', 'lsp'], pythonPath: '' }, undefined, vars)),
            /msmap\.server\.command/);
    });
});

describe('restart queue', () => {
    it('runs a request at once when idle', async () => {
        let runs = 0;
        const queue = new RestartQueue(async () => {
            runs += 1;
        });
        await queue.request();
        assert.equal(runs, 1);
    });

    it('queues requests made during a run and coalesces them into one more run', async () => {
        const gates = [deferred(), deferred()];
        let runs = 0;
        let concurrent = 0;
        let maxConcurrent = 0;
        const queue = new RestartQueue(async () => {
            const gate = gates[runs];
            runs += 1;
            concurrent += 1;
            maxConcurrent = Math.max(maxConcurrent, concurrent);
            await gate.promise;
            concurrent -= 1;
        });

        const first = queue.request();
        const second = queue.request();
        const third = queue.request();
        const fourth = queue.request();
        assert.notEqual(first, second);
        assert.equal(second, third);
        assert.equal(third, fourth);

        gates[0].resolve();
        await first;
        gates[1].resolve();
        await fourth;
        await queue.idle();
        assert.equal(runs, 2);
        assert.equal(maxConcurrent, 1);
    });

    it('keeps going after a failed run', async () => {
        let runs = 0;
        const queue = new RestartQueue(async () => {
            runs += 1;
            if (runs === 1) {
                throw new Error('boom');
            }
        });
        const failing = queue.request();
        const next = queue.request();
        await assert.rejects(failing, /boom/);
        await next;
        assert.equal(runs, 2);
    });

    it('reports idle only when nothing is running or queued', async () => {
        const gate = deferred();
        let finished = 0;
        const queue = new RestartQueue(async () => {
            await gate.promise;
            finished += 1;
        });
        void queue.request();
        void queue.request();
        const idle = queue.idle().then(() => finished);
        gate.resolve();
        assert.equal(await idle, 2);
    });
});

describe('language server lifecycle (stub client)', () => {
    const channel = {} as never;

    beforeEach(() => {
        events.length = 0;
        clients.length = 0;
        notifications.length = 0;
        stub.startServer = async () => undefined;
        stub.running = true;
        for (const key of Object.keys(configuration)) {
            delete configuration[key];
        }
    });

    it('starts `python3 -m kb lsp` with the settings as initializationOptions', async () => {
        configuration.device = 'GPU';
        configuration['severity.guess'] = 'off';
        const server = new LanguageServer(channel);
        await server.restart('test');
        assert.equal(clients.length, 1);
        assert.deepEqual(clients[0].serverOptions, { command: 'python3', args: ['-m', 'kb', 'lsp'] });
        const options = clients[0].clientOptions.initializationOptions as { device: string; severity: { guess: string } };
        assert.equal(options.device, 'GPU');
        assert.equal(options.severity.guess, 'off');
        assert.equal(await server.ready(), clients[0]);
    });

    it('stops the old server before starting the next, and coalesces restarts requested meanwhile', async () => {
        const server = new LanguageServer(channel);
        await server.restart('first');
        const gate = deferred();
        stub.startServer = () => gate.promise;
        const second = server.restart('settings changed');
        const third = server.restart('settings changed again');
        const fourth = server.restart('and again');
        gate.resolve();
        await Promise.all([second, third, fourth]);
        assert.deepEqual(events, [
            'start 1 (0 running)',
            'stop 1',
            'start 2 (0 running)',
            'stop 2',
            'start 3 (0 running)',
        ]);
        assert.equal(await server.ready(), clients[2]);
    });

    it('reports a failed start once, with install advice', async () => {
        stub.startServer = async () => {
            throw new Error('spawn python3 ENOENT');
        };
        const server = new LanguageServer(channel);
        await server.restart('test');
        assert.equal(await server.ready(), undefined);
        assert.equal(notifications.length, 1);
        assert.match(notifications[0], /pip install msmap/);
    });

    it('reports a server that exits during initialization, though start() resolves', async () => {
        // What vscode-languageclient 9 does when `python3 -m kb lsp` finds no kb module.
        stub.running = false;
        const server = new LanguageServer(channel);
        await server.restart('test');
        assert.equal(await server.ready(), undefined);
        assert.equal(notifications.length, 1);
        assert.match(notifications[0], /pip install msmap/);
    });

    it('stops the server and starts no other after stop()', async () => {
        const server = new LanguageServer(channel);
        await server.restart('test');
        await server.stop();
        await server.restart('too late');
        assert.deepEqual(events, ['start 1 (0 running)', 'stop 1']);
    });
});
