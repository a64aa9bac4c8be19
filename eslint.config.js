import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Globals that read real time or schedule on it, with what to use instead. */
function realWorldGlobals(instead, more = []) {
  const message = `real time breaks the simulator's determinism: use ${instead}`;
  return ['setTimeout', 'setInterval', 'clearTimeout', 'clearInterval', 'Date', 'performance', ...more].map(
    (name) => ({ name, message }),
  );
}

const processGlobal = {
  name: 'process',
  message: 'process output and exit go through NodeEnv (stdout, stderr, exit)',
};

const mathRandom = {
  object: 'Math',
  property: 'random',
  message: 'randomness is seeded: use NodeEnv.random (the simulator forks one generator per node)',
};

/** Node modules that reach sockets, files, timers or randomness; the simulator may hash (crypto). */
function realWorldModules(names = ['net', 'fs', 'fs/promises', 'timers', 'perf_hooks', 'crypto']) {
  return names.flatMap((name) =>
    [name, `node:${name}`].map((path) => ({
      name: path,
      message: 'sockets, files, timers and randomness come through the seams (Net, DiskFs, NodeEnv)',
    })),
  );
}

const realWorldModulePatterns = [
  { group: ['**/node-seams.js'], message: "Node's seams are passed in by the real node's entry (node.ts)" },
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'store/', 'bin/', 'eslint.config.js', 'coverage/'] },
  eslint.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
      '@typescript-eslint/no-unnecessary-condition': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  // Plain JavaScript (the example system's server): no type information to lint with.
  { files: ['**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  // kvraft takes time, timers, randomness, sockets and files from its seams
  // (src/systems/kvraft/seams.ts), so the simulator can run the same code: only Node's
  // implementation of the seams (node-seams.ts) and the process entry (node.ts) may reach them.
  {
    files: [
      'src/systems/kvraft/client.ts',
      'src/systems/kvraft/seams.ts',
      'src/systems/kvraft/_internals/*.ts',
    ],
    ignores: ['src/systems/kvraft/_internals/node-seams.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        ...realWorldGlobals('the seams (NodeEnv)', ['setImmediate', 'clearImmediate']),
        processGlobal,
      ],
      'no-restricted-properties': ['error', mathRandom],
      'no-restricted-imports': ['error', { paths: realWorldModules(), patterns: realWorldModulePatterns }],
    },
  },
  // The simulator runs on virtual time and its own seeded generator; one real setImmediate per event
  // lets promise callbacks run between events, nothing else real is used.
  {
    files: ['src/sim/**/*.ts'],
    rules: {
      'no-restricted-globals': ['error', ...realWorldGlobals("the world's clock (World.now)")],
      'no-restricted-properties': ['error', mathRandom],
      'no-restricted-imports': [
        'error',
        {
          paths: realWorldModules(['net', 'fs', 'fs/promises', 'timers', 'perf_hooks']),
          patterns: realWorldModulePatterns,
        },
      ],
    },
  },
);
