// Server: how `msmap lsp` is launched (pure functions), and its lifecycle.
// All (re)starts go through one RestartQueue, so they never overlap.
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
    CloseAction,
    DynamicFeature,
    ErrorAction,
    ErrorHandler,
    ExecuteCommandRequest,
    LanguageClient,
    LanguageClientOptions,
    RevealOutputChannelOn,
    StaticFeature,
} from 'vscode-languageclient/node';
import { describeError, logError, logInfo, notifyError } from './logging';
import { selectedInterpreter } from './python';
import { serverLogChannel } from './serverlog';
import { currentSettings, LaunchSettings, ServerSettings, toInitializationOptions } from './settings';

export const SERVER_ID = 'msmap';
export const SERVER_NAME = 'msmap language server';
/** Arguments after the interpreter when no `msmap.server.command` is set. */
export const SERVER_MODULE_ARGS: readonly string[] = ['-m', 'kb', 'lsp'];
export const DEFAULT_PYTHON = 'python3';
const RESTART = 'Restart server';

export interface ServerLaunch {
    command: string;
    args: string[];
    /** What chose the command, for messages. */
    source: 'server.command' | 'server.pythonPath' | 'Python extension' | 'default';
}

export interface PathVariables {
    userHome: string;
    workspaceFolder?: string;
}

/** Expand `${userHome}`, `${workspaceFolder}` and a leading `~` in a setting value. */
export function expandVariables(value: string, vars: PathVariables): string {
    let result = value.replace(/^~(?=$|[\\/])/, vars.userHome).replaceAll('${userHome}', vars.userHome);
    if (vars.workspaceFolder !== undefined) {
        result = result.replaceAll('${workspaceFolder}', vars.workspaceFolder);
    }
    return result;
}

/** True when the server runs with the interpreter chosen in the Python extension. */
export function usesSelectedInterpreter(launch: LaunchSettings): boolean {
    return launch.command.length === 0 && launch.pythonPath === '';
}

/**
 * The server command line: `msmap.server.command` if set, else
 * `<python> -m kb lsp` with `msmap.server.pythonPath`, the interpreter selected
 * in the Python extension, or `python3`, in that order.
 */
export function serverLaunch(launch: LaunchSettings, interpreter: string | undefined, vars: PathVariables): ServerLaunch {
    if (launch.command.length > 0) {
        const [command, ...args] = launch.command.map((part) => expandVariables(part, vars));
        return { command, args, source: 'server.command' };
    }
    const args = [...SERVER_MODULE_ARGS];
    if (launch.pythonPath !== '') {
        return { command: expandVariables(launch.pythonPath, vars), args, source: 'server.pythonPath' };
    }
    if (interpreter !== undefined && interpreter !== '') {
        return { command: interpreter, args, source: 'Python extension' };
    }
    return { command: DEFAULT_PYTHON, args, source: 'default' };
}

export function formatCommand(launch: ServerLaunch): string {
    return [launch.command, ...launch.args].map((part) => (/[\s"']/.test(part) ? JSON.stringify(part) : part)).join(' ');
}

/** The notification shown when the server does not start. */
export function startFailureMessage(launch: ServerLaunch): string {
    const install = 'Install msmap with "pip install msmap" (or "pip install -e <path to an msmap checkout>")';
    if (launch.source === 'server.command') {
        return `msmap: the language server did not start with "${formatCommand(launch)}". ` +
            `Check the msmap.server.command setting. ${install}.`;
    }
    return `msmap: the language server did not start with "${formatCommand(launch)}". ` +
        `${install} in that Python environment, or set msmap.server.pythonPath to a Python that has it.`;
}

/**
 * Runs `task` one at a time. A request made while it runs is queued, and later
 * requests join the queued one: a burst of setting changes restarts once more,
 * not once per change, and two restarts never overlap.
 */
export class RestartQueue {
    private running: Promise<void> | undefined;
    private queued: Promise<void> | undefined;

    constructor(private readonly task: () => Promise<void>) {}

    request(): Promise<void> {
        if (this.queued !== undefined) {
            return this.queued;
        }
        if (this.running === undefined) {
            return this.run();
        }
        this.queued = this.running
            .catch(() => undefined)
            .then(() => {
                this.queued = undefined;
                return this.run();
            });
        return this.queued;
    }

    /** Resolves once nothing is running or queued. */
    async idle(): Promise<void> {
        for (let pending = this.queued ?? this.running; pending !== undefined; pending = this.queued ?? this.running) {
            await pending.catch(() => undefined);
        }
    }

    private run(): Promise<void> {
        const run: Promise<void> = Promise.resolve()
            .then(() => this.task())
            .finally(() => {
                if (this.running === run) {
                    this.running = undefined;
                }
            });
        this.running = run;
        return run;
    }
}

/** vscode-languageclient's message for a server process that exited normally. */
export function isNormalExit(message: string): boolean {
    return message === 'Server process exited with code 0.';
}

/** Unexpected exits within this window count towards the limit of automatic restarts. */
export const CRASH_WINDOW_MS = 3 * 60 * 1000;
export const MAX_AUTOMATIC_RESTARTS = 3;

/**
 * Remembers when the server stopped unexpectedly, and says whether to restart it:
 * yes, unless it already stopped MAX_AUTOMATIC_RESTARTS times in CRASH_WINDOW_MS
 * (a server that dies at once would otherwise restart for ever).
 */
export class CrashCounter {
    private readonly times: number[] = [];

    /** Record a crash at `now` (ms); true when the server should be restarted. */
    crashed(now: number): boolean {
        while (this.times.length > 0 && now - this.times[0] > CRASH_WINDOW_MS) {
            this.times.shift();
        }
        this.times.push(now);
        return this.times.length <= MAX_AUTOMATIC_RESTARTS;
    }
}

class MsmapLanguageClient extends LanguageClient {
    // The server's commands (msmap.search, msmap.lookup, msmap.fixAll) are sent
    // with sendRequest. The built-in feature would also register them as VS Code
    // commands, which clashes with the extension's own `msmap.lookup`.
    public override registerFeature(feature: StaticFeature | DynamicFeature<unknown>): void {
        if ('registrationType' in feature && feature.registrationType.method === ExecuteCommandRequest.method) {
            return;
        }
        super.registerFeature(feature);
    }

    // LanguageServer reports failures to the user once, with advice; the client
    // only logs them. A server that exits with code 0 was stopped (a restart, the
    // window closing): the client logs that as an error too, but it is not one.
    public override error(message: string, data?: unknown): void {
        if (isNormalExit(message)) {
            super.info(message, data, false);
            return;
        }
        super.error(message, data, false);
    }
}

function createClient(launch: ServerLaunch, initializationOptions: ServerSettings, channel: vscode.LogOutputChannel,
    onExit: () => void): LanguageClient {
    const errorHandler: ErrorHandler = {
        error: (_error, _message, count) => {
            const giveUp = count === undefined || count > 3;
            if (giveUp) {
                onExit();
            }
            return { action: giveUp ? ErrorAction.Shutdown : ErrorAction.Continue, handled: true };
        },
        closed: () => {
            onExit();
            // LanguageServer decides whether to restart; this replaces the client's
            // "Server will not be restarted." in the log.
            return { action: CloseAction.DoNotRestart, handled: true, message: 'The connection to the language server closed.' };
        },
    };
    const clientOptions: LanguageClientOptions = {
        documentSelector: [
            { scheme: 'file', language: 'python' },
            { scheme: 'untitled', language: 'python' },
        ],
        initializationOptions,
        outputChannel: serverLogChannel(channel),
        traceOutputChannel: channel,
        revealOutputChannelOn: RevealOutputChannelOn.Never,
        errorHandler,
        initializationFailedHandler: () => false,
    };
    const serverOptions = { command: launch.command, args: launch.args };
    return new MsmapLanguageClient(SERVER_ID, SERVER_NAME, serverOptions, clientOptions);
}

/** The one language server of this window. */
export class LanguageServer {
    private client: LanguageClient | undefined;
    private stopped = false;
    private readonly crashes = new CrashCounter();
    private readonly restarts = new RestartQueue(() => this.replaceClient());

    constructor(private readonly channel: vscode.LogOutputChannel) {}

    /** (Re)start the server with the current settings; queued behind any restart in progress. */
    restart(reason: string): Promise<void> {
        logInfo(`Restart requested: ${reason}.`);
        return this.restarts.request().catch((error) => logError('Restart failed', error));
    }

    /** The running client once pending restarts are done, or undefined if the server is down. */
    async ready(): Promise<LanguageClient | undefined> {
        await this.restarts.idle();
        return this.client?.isRunning() ? this.client : undefined;
    }

    async stop(): Promise<void> {
        this.stopped = true;
        await this.restarts.idle();
        await this.stopClient();
    }

    private async replaceClient(): Promise<void> {
        await this.stopClient();
        if (this.stopped) {
            return;
        }
        const settings = currentSettings();
        const folder = vscode.workspace.workspaceFolders?.[0];
        const interpreter = usesSelectedInterpreter(settings.launch) ? await selectedInterpreter(folder?.uri) : undefined;
        const launch = serverLaunch(settings.launch, interpreter, {
            userHome: os.homedir(),
            workspaceFolder: folder?.uri.fsPath,
        });
        const options = toInitializationOptions(settings.server);
        logInfo(`Starting ${formatCommand(launch)} (command from: ${launch.source}).`);
        logInfo(`initializationOptions: ${JSON.stringify(options)}`);

        const client: LanguageClient = createClient(launch, options, this.channel, () => this.onExit(client));
        let failure: unknown;
        try {
            await client.start();
        } catch (error) {
            failure = error;
        }
        // vscode-languageclient 9 resolves start() when the server exits during
        // `initialize` (e.g. "No module named kb"), so check the state as well.
        // See microsoft/vscode-languageserver-node#1307.
        if (failure !== undefined || !client.isRunning()) {
            logError('The language server did not start', failure ?? 'it exited during initialization');
            void notifyError(startFailureMessage(launch));
            return;
        }
        this.client = client;
        logInfo('The language server is running.');
    }

    private async stopClient(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        if (client?.needsStop()) {
            try {
                await client.stop();
            } catch (error) {
                logError(`Stopping the language server failed: ${describeError(error)}`);
            }
        }
    }

    // Called by the client when its server exits or its connection breaks. Exits
    // during start-up are reported by replaceClient, and deliberate stops do not
    // reach this point. The server is restarted at once, unless it keeps crashing.
    private onExit(client: LanguageClient): void {
        if (client !== this.client) {
            return;
        }
        this.client = undefined;
        if (this.crashes.crashed(Date.now())) {
            void notifyError('msmap: the language server stopped unexpectedly; it was restarted.');
            void this.restart('the server stopped unexpectedly');
            return;
        }
        void notifyError(`msmap: the language server stopped unexpectedly ${MAX_AUTOMATIC_RESTARTS + 1} times ` +
            'in 3 minutes; it was not restarted.', RESTART).then((picked) => {
            if (picked === RESTART) {
                void this.restart('after the server stopped');
            }
        });
    }
}
