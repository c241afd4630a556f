// Settings: the `msmap.*` configuration read into typed values.
//
// package.json declares every setting with its default; this module mirrors the
// server's part of them as `ServerSettings`, which is sent unchanged as the
// server's `initializationOptions` (camelCase keys, `severity` nested). The
// extension-only settings (`msmap.server.*`) choose how the server is started.
// `msmap.trace.server` is read by vscode-languageclient itself.
import * as vscode from 'vscode';

export const SECTION = 'msmap';

export const TARGET_FAMILIES = ['classic', 'mint'] as const;
export const DEVICES = ['CPU', 'GPU', 'Ascend'] as const;
export const SEVERITIES = ['error', 'warning', 'information', 'hint', 'off'] as const;

export type TargetFamily = (typeof TARGET_FAMILIES)[number];
export type Device = (typeof DEVICES)[number];
export type Severity = (typeof SEVERITIES)[number];

export interface SeveritySettings {
    noEquivalent: Severity;
    behaviorChange: Severity;
    contextChange: Severity;
    rename: Severity;
    guess: Severity;
    deviceSupport: Severity;
}

/** What the language server receives; the shape of its settings model. */
export interface ServerSettings {
    targetFamily: TargetFamily;
    mindsporeVersion: string;
    device: Device;
    tensorMethodGuesses: boolean;
    severity: SeveritySettings;
}

/** How the extension starts the server. */
export interface LaunchSettings {
    /** `msmap.server.command`: the full command line; empty means `<python> -m kb lsp`. */
    command: string[];
    /** `msmap.server.pythonPath`: empty means "ask the Python extension". */
    pythonPath: string;
}

export interface Settings {
    server: ServerSettings;
    launch: LaunchSettings;
}

/**
 * The server's defaults, as documented in DESIGN.md. VS Code fills in the
 * package.json defaults before we read, so these only replace values that are
 * missing or of the wrong type; a unit test keeps the two in step.
 */
export const DEFAULT_SERVER_SETTINGS: ServerSettings = {
    targetFamily: 'classic',
    mindsporeVersion: '2.10.0',
    device: 'CPU',
    tensorMethodGuesses: true,
    severity: {
        noEquivalent: 'warning',
        behaviorChange: 'warning',
        contextChange: 'warning',
        rename: 'information',
        guess: 'hint',
        deviceSupport: 'warning',
    },
};

/** The part of `vscode.WorkspaceConfiguration` this module needs. */
export interface ConfigReader {
    get<T>(key: string): T | undefined;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], fallback: T): T {
    return allowed.includes(value as T) ? (value as T) : fallback;
}

function text(value: unknown, fallback: string): string {
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : fallback;
}

function flag(value: unknown, fallback: boolean): boolean {
    return typeof value === 'boolean' ? value : fallback;
}

function readSeverity(config: ConfigReader): SeveritySettings {
    const defaults = DEFAULT_SERVER_SETTINGS.severity;
    const level = (name: keyof SeveritySettings): Severity =>
        oneOf(config.get(`severity.${name}`), SEVERITIES, defaults[name]);
    return {
        noEquivalent: level('noEquivalent'),
        behaviorChange: level('behaviorChange'),
        contextChange: level('contextChange'),
        rename: level('rename'),
        guess: level('guess'),
        deviceSupport: level('deviceSupport'),
    };
}

/** Read the `msmap` configuration section (keys without the `msmap.` prefix). */
export function readSettings(config: ConfigReader): Settings {
    const defaults = DEFAULT_SERVER_SETTINGS;
    const command = config.get<unknown>('server.command');
    return {
        server: {
            targetFamily: oneOf(config.get('targetFamily'), TARGET_FAMILIES, defaults.targetFamily),
            mindsporeVersion: text(config.get('mindsporeVersion'), defaults.mindsporeVersion),
            device: oneOf(config.get('device'), DEVICES, defaults.device),
            tensorMethodGuesses: flag(config.get('tensorMethodGuesses'), defaults.tensorMethodGuesses),
            severity: readSeverity(config),
        },
        launch: {
            command: Array.isArray(command)
                ? command.filter((part): part is string => typeof part === 'string' && part !== '')
                : [],
            pythonPath: text(config.get('server.pythonPath'), ''),
        },
    };
}

/** The `initializationOptions` of the `initialize` request. */
export function toInitializationOptions(settings: ServerSettings): ServerSettings {
    return { ...settings, severity: { ...settings.severity } };
}

/**
 * Settings whose change needs a server restart: everything the server receives
 * plus how it is launched. `msmap.trace.server` is applied live by the client.
 */
export const RESTART_SECTIONS: readonly string[] = [
    ...Object.keys(DEFAULT_SERVER_SETTINGS).map((key) => `${SECTION}.${key}`),
    `${SECTION}.server`,
];

export function needsRestart(event: { affectsConfiguration(section: string): boolean }): boolean {
    return RESTART_SECTIONS.some((section) => event.affectsConfiguration(section));
}

/** The current settings of this window. */
export function currentSettings(): Settings {
    return readSettings(vscode.workspace.getConfiguration(SECTION));
}
