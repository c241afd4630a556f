// package.json, read the way VS Code reads it, for tests that hold the code to it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigReader } from '../src/common/settings';

export interface SettingDeclaration {
    type: string;
    default: unknown;
    enum?: unknown[];
    markdownDescription?: string;
    description?: string;
}

interface Manifest {
    contributes: {
        commands: { command: string; title: string; category: string }[];
        configuration: { properties: Record<string, SettingDeclaration> };
    };
}

// Tests run from out/test/ (see the "pretest" script).
export const extensionRoot = path.resolve(__dirname, '..', '..');

export const manifest = JSON.parse(fs.readFileSync(path.join(extensionRoot, 'package.json'), 'utf8')) as Manifest;

/** Declared settings by key without the `msmap.` prefix. */
export const declaredSettings: Record<string, SettingDeclaration> = Object.fromEntries(
    Object.entries(manifest.contributes.configuration.properties).map(([key, value]) => [key.replace(/^msmap\./, ''), value]),
);

/** Keys of the settings only the extension uses. */
export const isExtensionOnly = (key: string): boolean => key.startsWith('server.') || key.startsWith('trace.');

/** A configuration that answers like VS Code with nothing set: the declared defaults, plus overrides. */
export function configWith(overrides: Record<string, unknown> = {}): ConfigReader {
    return {
        get: <T>(key: string): T | undefined => (key in overrides ? overrides[key] : declaredSettings[key]?.default) as T | undefined,
    };
}
