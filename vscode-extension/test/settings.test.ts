import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
    DEFAULT_SERVER_SETTINGS,
    DEVICES,
    needsRestart,
    readSettings,
    SEVERITIES,
    TARGET_FAMILIES,
    toInitializationOptions,
} from '../src/common/settings';
import { configWith, declaredSettings, extensionRoot, isExtensionOnly } from './manifest';

// The table "Language server settings" in DESIGN.md.
const DOCUMENTED_DEFAULTS = {
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

const serverKeys = Object.keys(declaredSettings).filter((key) => !isExtensionOnly(key));

function valueAt(options: object, key: string): unknown {
    return key.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], options);
}

/** Another valid value than the declared default. */
function otherValue(key: string): unknown {
    const { default: fallback, enum: choices, type } = declaredSettings[key];
    if (choices !== undefined) {
        return choices.find((choice) => choice !== fallback);
    }
    return type === 'boolean' ? !fallback : '9.9.9';
}

describe('settings → initializationOptions', () => {
    it('turns the declared defaults into the documented options', () => {
        const { server } = readSettings(configWith());
        assert.deepEqual(toInitializationOptions(server), DOCUMENTED_DEFAULTS);
        assert.deepEqual(DEFAULT_SERVER_SETTINGS, DOCUMENTED_DEFAULTS);
    });

    it('maps every server setting of package.json, and only those', () => {
        const mapped = Object.entries(DEFAULT_SERVER_SETTINGS).flatMap(([key, value]) =>
            typeof value === 'object' ? Object.keys(value as object).map((inner) => `${key}.${inner}`) : [key],
        );
        assert.deepEqual([...serverKeys].sort(), mapped.sort());
    });

    for (const key of serverKeys) {
        it(`reads msmap.${key} into options.${key}, with the same default`, () => {
            assert.deepEqual(declaredSettings[key].default, valueAt(DEFAULT_SERVER_SETTINGS, key));
            const changed = otherValue(key);
            assert.notEqual(changed, undefined);
            const { server } = readSettings(configWith({ [key]: changed }));
            assert.deepEqual(valueAt(toInitializationOptions(server), key), changed);
        });
    }

    it('offers the choices the settings module accepts', () => {
        assert.deepEqual(declaredSettings.targetFamily.enum, [...TARGET_FAMILIES]);
        assert.deepEqual(declaredSettings.device.enum, [...DEVICES]);
        for (const key of serverKeys.filter((k) => k.startsWith('severity.'))) {
            assert.deepEqual(declaredSettings[key].enum, [...SEVERITIES], key);
        }
    });

    it('falls back to the defaults for missing or mistyped values', () => {
        const empty = { get: (): undefined => undefined };
        assert.deepEqual(readSettings(empty).server, DOCUMENTED_DEFAULTS);
        const wrong = configWith({
            targetFamily: 'jax',
            device: 'TPU',
            mindsporeVersion: 2.1,
            tensorMethodGuesses: 'yes',
            'severity.rename': 'loud',
        });
        assert.deepEqual(readSettings(wrong).server, DOCUMENTED_DEFAULTS);
    });

    it('copies the options, so later changes do not leak into a sent request', () => {
        const server = readSettings(configWith()).server;
        const options = toInitializationOptions(server);
        options.severity.guess = 'off';
        assert.equal(server.severity.guess, 'hint');
    });
});

describe('extension-only settings', () => {
    it('declares the launch and trace settings with empty defaults', () => {
        assert.deepEqual(declaredSettings['server.command'].default, []);
        assert.equal(declaredSettings['server.pythonPath'].default, '');
        assert.equal(declaredSettings['trace.server'].default, 'off');
        assert.deepEqual(readSettings(configWith()).launch, { command: [], pythonPath: '' });
    });

    it('keeps them out of the initializationOptions', () => {
        const options = toInitializationOptions(readSettings(configWith({ 'server.pythonPath': '/usr/bin/python3' })).server);
        assert.equal('server' in options, false);
        assert.equal('trace' in options, false);
    });

    it('cleans up the launch settings', () => {
        const config = configWith({ 'server.command': ['msmap', '', 3, 'lsp'], 'server.pythonPath': '  ~/venv/bin/python ' });
        assert.deepEqual(readSettings(config).launch, { command: ['msmap', 'lsp'], pythonPath: '~/venv/bin/python' });
    });

    it('describes every setting in the Settings UI', () => {
        for (const [key, declaration] of Object.entries(declaredSettings)) {
            assert.ok(declaration.markdownDescription ?? declaration.description, `msmap.${key} has no description`);
        }
    });
});

describe('restart on change', () => {
    const changed = (...sections: string[]) => ({
        affectsConfiguration: (section: string) => sections.some((s) => s === section || s.startsWith(`${section}.`)),
    });

    it('restarts for server settings and launch settings', () => {
        for (const key of Object.keys(declaredSettings).filter((k) => !k.startsWith('trace.'))) {
            assert.equal(needsRestart(changed(`msmap.${key}`)), true, key);
        }
    });

    it('does not restart for tracing, which the client applies live, or other extensions', () => {
        assert.equal(needsRestart(changed('msmap.trace.server')), false);
        assert.equal(needsRestart(changed('python.defaultInterpreterPath')), false);
    });
});

describe('README', () => {
    const readme = fs.readFileSync(path.join(extensionRoot, 'README.md'), 'utf8');

    it('lists every setting with its default', () => {
        for (const [key, declaration] of Object.entries(declaredSettings)) {
            const row = readme.split('\n').find((line) => line.startsWith(`| \`msmap.${key}\``));
            assert.ok(row, `README.md has no row for msmap.${key}`);
            assert.ok(row.includes(`\`${JSON.stringify(declaration.default)}\``), `README.md row of msmap.${key} lacks its default`);
        }
    });
});
