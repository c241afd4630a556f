// Entry point. Only wiring: the output channel, the commands, the language
// server, and the events that restart it. Each concern lives in src/common/.
import * as vscode from 'vscode';
import { registerCommands } from './common/commands';
import { createOutputChannel } from './common/logging';
import { onDidChangeInterpreter } from './common/python';
import { LanguageServer, usesSelectedInterpreter } from './common/server';
import { currentSettings, needsRestart } from './common/settings';

let server: LanguageServer | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const channel = createOutputChannel();
    const languageServer = new LanguageServer(channel);
    server = languageServer;

    context.subscriptions.push(
        channel,
        ...registerCommands(languageServer),
        vscode.workspace.onDidChangeConfiguration((event) => {
            if (needsRestart(event)) {
                void languageServer.restart('settings changed');
            }
        }),
    );

    void languageServer.restart('activation');

    const interpreterWatch = await onDidChangeInterpreter(() => {
        if (usesSelectedInterpreter(currentSettings().launch)) {
            void languageServer.restart('Python interpreter changed');
        }
    });
    if (interpreterWatch !== undefined) {
        context.subscriptions.push(interpreterWatch);
    }
}

export async function deactivate(): Promise<void> {
    await server?.stop();
    server = undefined;
}
