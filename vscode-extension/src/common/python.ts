// Python: the interpreter selected in the Python extension (ms-python.python),
// used when `msmap.server.pythonPath` is empty. The Python extension is optional;
// without it (or when it fails) these functions return undefined.
import * as vscode from 'vscode';
import { describeError, logWarning } from './logging';

export const PYTHON_EXTENSION_ID = 'ms-python.python';

// The slice of the Python extension's API used here (see @vscode/python-extension).
interface EnvironmentPath {
    readonly id: string;
    readonly path: string;
}

interface ResolvedEnvironment {
    readonly executable: { readonly uri: vscode.Uri | undefined };
}

interface PythonEnvironments {
    getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment(environment: EnvironmentPath): Promise<ResolvedEnvironment | undefined>;
    readonly onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
}

interface PythonExtensionApi {
    readonly environments?: PythonEnvironments;
}

async function environments(): Promise<PythonEnvironments | undefined> {
    const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
    if (extension === undefined) {
        return undefined;
    }
    try {
        const api = extension.isActive ? extension.exports : await extension.activate();
        return api?.environments;
    } catch (error) {
        logWarning(`The Python extension could not be activated: ${describeError(error)}`);
        return undefined;
    }
}

/** Path of the interpreter the Python extension has selected for `resource`. */
export async function selectedInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
    const envs = await environments();
    if (envs === undefined) {
        return undefined;
    }
    try {
        const active = envs.getActiveEnvironmentPath(resource);
        const resolved = await envs.resolveEnvironment(active);
        return resolved?.executable.uri?.fsPath;
    } catch (error) {
        logWarning(`Could not read the interpreter selected in the Python extension: ${describeError(error)}`);
        return undefined;
    }
}

/** Call `listener` whenever the user selects another interpreter. */
export async function onDidChangeInterpreter(listener: () => void): Promise<vscode.Disposable | undefined> {
    const envs = await environments();
    return envs?.onDidChangeActiveEnvironmentPath(() => listener());
}
