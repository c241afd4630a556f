// Logging: one "msmap" output channel shared by the extension and the language
// client (server stderr and protocol traces land there too), and the error
// notifications that point at it.
import * as vscode from 'vscode';

export const SHOW_LOGS = 'Show logs';

let channel: vscode.LogOutputChannel | undefined;

export function createOutputChannel(): vscode.LogOutputChannel {
    channel = vscode.window.createOutputChannel('msmap', { log: true });
    return channel;
}

export function logInfo(message: string): void {
    channel?.info(message);
}

export function logWarning(message: string): void {
    channel?.warn(message);
}

export function logError(message: string, error?: unknown): void {
    channel?.error(error === undefined ? message : `${message}: ${describeError(error)}`);
}

export function describeError(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}

export function showOutput(): void {
    channel?.show(true);
}

/**
 * Show an error notification with the given actions plus "Show logs".
 * Resolves to the action the user picked ("Show logs" is handled here).
 */
export async function notifyError(message: string, ...actions: string[]): Promise<string | undefined> {
    logError(message);
    const picked = await vscode.window.showErrorMessage(message, ...actions, SHOW_LOGS);
    if (picked === SHOW_LOGS) {
        showOutput();
    }
    return picked;
}
