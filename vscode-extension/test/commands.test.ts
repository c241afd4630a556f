import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { COMMAND_IDS, toQuickPickItem } from '../src/common/commands';
import { manifest } from './manifest';

describe('commands', () => {
    it('handles exactly the commands package.json declares', () => {
        const declared = manifest.contributes.commands.map((command) => command.command);
        assert.deepEqual([...declared].sort(), [...COMMAND_IDS].sort());
    });

    it('shows the documented titles in the command palette', () => {
        const titles = Object.fromEntries(
            manifest.contributes.commands.map((command) => [command.command, `${command.category}: ${command.title}`]),
        );
        assert.deepEqual(titles, {
            'msmap.lookup': 'msmap: Look up API…',
            'msmap.migrateFile': 'msmap: Migrate this file',
            'msmap.restartServer': 'msmap: Restart server',
            'msmap.showOutput': 'msmap: Show output',
        });
    });

    it('turns search hits into quick pick items the picker does not filter again', () => {
        assert.deepEqual(
            toQuickPickItem({ name: 'torch.nn.Dropout', relation: 'param_semantics_differ', summary: 'p vs keep_prob' }),
            { label: 'torch.nn.Dropout', description: 'param semantics differ', detail: 'p vs keep_prob', alwaysShow: true },
        );
        assert.deepEqual(
            toQuickPickItem({ name: 'torch.frobnicate', relation: null, summary: null }),
            { label: 'torch.frobnicate', description: '', detail: undefined, alwaysShow: true },
        );
    });
});
