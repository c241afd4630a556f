// A tiny stand-in for the `vscode` module, bundled into the unit tests in its
// place (see the "pretest" script). It implements only what the tested code
// touches; tests set `configuration` and read `notifications`.

/** Values returned by getConfiguration('msmap').get(key); keys without "msmap.". */
export const configuration: Record<string, unknown> = {};
/** Messages passed to window.show*Message, in order. */
export const notifications: string[] = [];

const channel = {
    info: (): void => undefined,
    warn: (): void => undefined,
    error: (): void => undefined,
    appendLine: (): void => undefined,
    show: (): void => undefined,
    dispose: (): void => undefined,
};

async function show(message: string): Promise<undefined> {
    notifications.push(message);
    return undefined;
}

export const workspace = {
    workspaceFolders: undefined,
    getConfiguration: () => ({ get: (key: string): unknown => configuration[key] }),
};

export const window = {
    createOutputChannel: () => channel,
    showErrorMessage: show,
    showWarningMessage: show,
    showInformationMessage: show,
};

export const extensions = { getExtension: (): undefined => undefined };
export const commands = {};
export const Uri = {};
