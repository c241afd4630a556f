// A stand-in for `vscode-languageclient/node` in the unit tests. The client
// records its life in `events`, and `startServer` decides how a start ends.

export const events: string[] = [];
export const clients: LanguageClient[] = [];
export const stub = {
    /** Replaced by tests to delay or fail starts. */
    startServer: async (): Promise<void> => undefined,
    /** Whether start() leaves the client running when startServer resolves. */
    running: true,
};

export const ExecuteCommandRequest = { method: 'workspace/executeCommand', type: {} };
export enum ErrorAction { Continue = 1, Shutdown = 2 }
export enum CloseAction { DoNotRestart = 1, Restart = 2 }
export enum RevealOutputChannelOn { Debug = 0, Info = 1, Warn = 2, Error = 3, Never = 4 }

export class LanguageClient {
    private state: 'initial' | 'running' | 'failed' | 'stopped' = 'initial';
    readonly number: number;

    constructor(
        readonly id: string,
        readonly name: string,
        readonly serverOptions: { command: string; args: string[] },
        readonly clientOptions: { initializationOptions?: unknown },
    ) {
        clients.push(this);
        this.number = clients.length;
    }

    async start(): Promise<void> {
        const alive = clients.filter((client) => client.isRunning()).length;
        events.push(`start ${this.number} (${alive} running)`);
        try {
            await stub.startServer();
            this.state = stub.running ? 'running' : 'stopped';
        } catch (error) {
            this.state = 'failed';
            throw error;
        }
    }

    async stop(): Promise<void> {
        events.push(`stop ${this.number}`);
        this.state = 'stopped';
    }

    needsStop(): boolean {
        return this.state === 'running';
    }

    isRunning(): boolean {
        return this.state === 'running';
    }

    registerFeature(): void {}

    error(): void {}

    info(): void {}
}
