// Commands: the handlers of the commands package.json declares. Look-up and
// migration call the server's own commands (DESIGN.md, "Server commands")
// through workspace/executeCommand.
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient } from 'vscode-languageclient/node';
import { describeError, logError, notifyError, showOutput } from './logging';
import { LanguageServer } from './server';

/** Every command in package.json `contributes.commands`, and no other. */
export const COMMAND_IDS = ['msmap.lookup', 'msmap.migrateFile', 'msmap.restartServer', 'msmap.showOutput'] as const;
export type CommandId = (typeof COMMAND_IDS)[number];

/** One result of the server command `msmap.search`. */
export interface SearchHit {
    name: string;
    relation: string | null;
    summary: string | null;
}

export const SEARCH_LIMIT = 50;
const SEARCH_DELAY_MS = 150;
const CARD_SCHEME = 'msmap';
const RESTART = 'Restart server';

function serverCommand<T>(client: LanguageClient, command: string, args: unknown[]): Promise<T> {
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }) as Promise<T>;
}

export function toQuickPickItem(hit: SearchHit): vscode.QuickPickItem {
    return {
        label: hit.name,
        description: hit.relation?.replaceAll('_', ' ') ?? '',
        detail: hit.summary ?? undefined,
        // The server's full-text search decides what matches; do not filter again.
        alwaysShow: true,
    };
}

/**
 * Show the items in the server's order. VS Code sorts a quick pick's items by how
 * well their label matches the typed text, which put `torch.alpha_dropout` before
 * `torch.nn.Dropout` for "Dropout". `sortByLabel` turns that off; VS Code has it
 * (proposal "quickPickSortByLabel") but @types/vscode does not declare it yet.
 */
function keepServerOrder(quickPick: vscode.QuickPick<vscode.QuickPickItem>): void {
    (quickPick as vscode.QuickPick<vscode.QuickPickItem> & { sortByLabel: boolean }).sortByLabel = false;
}

async function runningClient(server: LanguageServer): Promise<LanguageClient | undefined> {
    const client = await server.ready();
    if (client === undefined) {
        const picked = await notifyError('msmap: the language server is not running.', RESTART);
        if (picked === RESTART) {
            await server.restart('msmap command');
        }
    }
    return client;
}

/** Read-only documents `msmap:/<api>.md` holding look-up cards, shown as Markdown previews. */
class LookupCards implements vscode.TextDocumentContentProvider {
    private readonly cards = new Map<string, string>();

    constructor(private readonly server: LanguageServer) {}

    remember(name: string, card: string): vscode.Uri {
        this.cards.set(name, card);
        return vscode.Uri.from({ scheme: CARD_SCHEME, path: `/${name}.md` });
    }

    async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
        const name = uri.path.replace(/^\//, '').replace(/\.md$/, '');
        const cached = this.cards.get(name);
        if (cached !== undefined) {
            return cached;
        }
        const client = await this.server.ready();
        const card = client === undefined ? null : await serverCommand<string | null>(client, 'msmap.lookup', [name]);
        return card ?? `# ${name}\n\nmsmap has no entry for this name, or its language server is not running.\n`;
    }
}

function pickApi(client: LanguageClient): Promise<string | undefined> {
    const quickPick = vscode.window.createQuickPick();
    quickPick.title = 'msmap: Look up API';
    quickPick.placeholder = 'A torch API, for example nn.Dropout, F.relu or torch.flatten';
    quickPick.matchOnDescription = true;
    quickPick.matchOnDetail = true;
    keepServerOrder(quickPick);
    let latest = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;

    const search = async (query: string, ticket: number): Promise<void> => {
        try {
            const hits = await serverCommand<SearchHit[] | null>(client, 'msmap.search', [query, SEARCH_LIMIT]);
            if (ticket === latest) {
                quickPick.items = (hits ?? []).map(toQuickPickItem);
            }
        } catch (error) {
            logError(`Search for "${query}" failed`, error);
        } finally {
            if (ticket === latest) {
                quickPick.busy = false;
            }
        }
    };

    return new Promise((resolve) => {
        const subscriptions: vscode.Disposable[] = [
            quickPick.onDidChangeValue((value) => {
                clearTimeout(timer);
                const ticket = ++latest;
                const query = value.trim();
                quickPick.busy = query !== '';
                if (query === '') {
                    quickPick.items = [];
                    return;
                }
                timer = setTimeout(() => void search(query, ticket), SEARCH_DELAY_MS);
            }),
            quickPick.onDidAccept(() => {
                // Enter with no result selected looks up the text as typed.
                const name = quickPick.selectedItems[0]?.label ?? quickPick.value.trim();
                resolve(name === '' ? undefined : name);
                quickPick.hide();
            }),
            quickPick.onDidHide(() => {
                clearTimeout(timer);
                resolve(undefined);
                for (const subscription of subscriptions) {
                    subscription.dispose();
                }
                quickPick.dispose();
            }),
        ];
        quickPick.show();
    });
}

async function showCard(uri: vscode.Uri): Promise<void> {
    try {
        await vscode.commands.executeCommand('markdown.showPreview', uri);
    } catch {
        // The built-in Markdown extension is disabled: show the source instead.
        await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: true });
    }
}

async function lookUpApi(server: LanguageServer, cards: LookupCards, given?: string): Promise<void> {
    const client = await runningClient(server);
    if (client === undefined) {
        return;
    }
    const name = given ?? (await pickApi(client));
    if (name === undefined) {
        return;
    }
    let card: string | null;
    try {
        card = await serverCommand<string | null>(client, 'msmap.lookup', [name]);
    } catch (error) {
        void notifyError(`msmap: looking up ${name} failed: ${describeError(error)}`);
        return;
    }
    if (card === null || card === '') {
        void vscode.window.showInformationMessage(`msmap: no entry for ${name}.`);
        return;
    }
    await showCard(cards.remember(name, card));
}

async function migrateFile(server: LanguageServer): Promise<void> {
    const document = vscode.window.activeTextEditor?.document;
    if (document?.languageId !== 'python') {
        void vscode.window.showWarningMessage('msmap: open a Python file to migrate it.');
        return;
    }
    const client = await runningClient(server);
    if (client === undefined) {
        return;
    }
    const file = vscode.workspace.asRelativePath(document.uri);
    try {
        const uri = client.code2ProtocolConverter.asUri(document.uri);
        const edits = await serverCommand<number | null>(client, 'msmap.fixAll', [uri]);
        const count = typeof edits === 'number' ? edits : 0;
        void vscode.window.showInformationMessage(count === 0
            ? `msmap: nothing to migrate in ${file}.`
            : `msmap: applied ${count} edit${count === 1 ? '' : 's'} to ${file}.`);
    } catch (error) {
        void notifyError(`msmap: migrating ${file} failed: ${describeError(error)}`);
    }
}

export function registerCommands(server: LanguageServer): vscode.Disposable[] {
    const cards = new LookupCards(server);
    const handlers: Record<CommandId, (...args: unknown[]) => unknown> = {
        'msmap.lookup': (name) => lookUpApi(server, cards, typeof name === 'string' ? name : undefined),
        'msmap.migrateFile': () => migrateFile(server),
        'msmap.restartServer': () => server.restart('msmap: Restart server'),
        'msmap.showOutput': () => showOutput(),
    };
    return [
        vscode.workspace.registerTextDocumentContentProvider(CARD_SCHEME, cards),
        ...COMMAND_IDS.map((id) => vscode.commands.registerCommand(id, handlers[id])),
    ];
}
