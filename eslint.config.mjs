// The project's lint (`npm run lint`): ESLint flat config with typescript-eslint, type-aware (the
// TypeScript project service reads tsconfig.json). Base: recommended-type-checked. A rule is turned
// off or loosened only where the codebase's deliberate style differs, with the reason on its line.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

/** The beacon adapter (drand HTTP client, the bot's beacon wiring): never imported by the domain. */
const BEACON_ADAPTER = {
  group: ['**/beacon/*'],
  message:
    'src/giveaway and the pure fairness code import no adapter: take a BeaconPort (giveaway/ports.ts); app/bot.ts wires src/beacon/.',
};
/** Fairness through its door: src/fairness/index.js loads without the BLS code (verify.ts, drand.ts). */
const FAIRNESS_INSIDE = {
  group: ['**/fairness/*', '!**/fairness/index.js'],
  message:
    'the domain uses fairness through src/fairness/index.js (verify.ts and drand.ts load the BLS code, which the running bot loads only to check a round).',
};
/** The storage's inside: the rest of the bot goes through src/storage/index.js, its one door. */
const STORAGE_INSIDE = {
  group: ['**/storage/*', '!**/storage/index.js'],
  message: 'import storage through src/storage/index.js (its public surface); export what you need from there.',
};
/** The entrant store's inside: only its index.ts is imported from outside giveaway/entrants/. */
const ENTRANT_STORE_INSIDE = {
  group: ['**/entrants/*', '!**/entrants/index.js'],
  message:
    'import the entrant store through giveaway/entrants/index.js (its interface); the other files are its inside.',
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.cache/**', 'test-output/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Chat and supporter text is cleaned of control characters on purpose (twitch/text, history).
      'no-control-regex': 'off',
      // Ports are async; a synchronous implementation stays `async` so a throw becomes a rejection.
      '@typescript-eslint/require-await': 'off',
      // Ports and route contexts are plain objects of closures (no `this`), typed with method syntax.
      '@typescript-eslint/unbound-method': 'off',
      // A leading underscore marks a binding left unused on purpose (a key omitted by destructuring).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
      // An abort passes on `signal.reason` and a retry rethrows the failure it caught, as given.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // A server's handler is declared before the server and set once it is ready (read before set).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/storage/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [ENTRANT_STORE_INSIDE, STORAGE_INSIDE] }],
    },
  },
  {
    files: ['src/storage/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [ENTRANT_STORE_INSIDE] }],
    },
  },
  {
    // Layers: the domain (src/giveaway) and the pure fairness procedure (src/fairness/) import
    // no adapter; the drand HTTP client and the bot's choice of beacon live in src/beacon/, wired
    // by the composition root (app/bot.ts). The domain uses fairness through its index (next block).
    files: ['src/fairness/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [BEACON_ADAPTER, ENTRANT_STORE_INSIDE, STORAGE_INSIDE] }],
    },
  },
  {
    files: ['src/giveaway/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [BEACON_ADAPTER, FAIRNESS_INSIDE, ENTRANT_STORE_INSIDE, STORAGE_INSIDE] },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests read HTTP/JSON bodies untyped (`await res.json()`) and assert their shape with expect.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
    },
  },
  {
    // Plain JavaScript (the start-up scripts, a load generator): no types to check against.
    files: ['**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: globals.node },
  },
  // Layout is Prettier's (npm run format; .prettierrc.json): no ESLint rule that could disagree with it.
  prettier,
);
