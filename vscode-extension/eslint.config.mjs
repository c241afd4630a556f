// Flat config: ESLint's recommended rules plus typescript-eslint's type-aware ones
// (no floating promises matters in an extension that starts processes).
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
    { ignores: ['dist/', 'out/', 'node_modules/'] },
    js.configs.recommended,
    {
        files: ['**/*.ts'],
        extends: [tseslint.configs.recommendedTypeChecked],
        languageOptions: {
            parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
        },
        rules: {
            '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
            eqeqeq: 'error',
        },
    },
    {
        files: ['test/**/*.ts'],
        rules: {
            // node:test's describe() and it() return promises the runner awaits.
            '@typescript-eslint/no-floating-promises': ['error', {
                allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'it'] }],
            }],
            // Fakes are async to match the interfaces they stand in for.
            '@typescript-eslint/require-await': 'off',
        },
    },
);
