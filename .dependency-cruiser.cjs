/**
 * The import rules of src/ (docs/architecture.md): the folders form layers, and a file may
 * import only from its own layer or the layers below it. Any cycle between files is refused,
 * type-only imports included. `npm test` runs this through test/unit/import-rules.test.ts.
 */

/** Layers from the top down; each entry is a path pattern (a regular expression). */
const LAYERS = [
  ['entry points', '^src/cli/'],
  ['test double and demo books', '^src/(testing|seeds)/'],
  ['server', '^src/(server|app)\\.ts$'],
  ['surfaces', '^src/(api|pages|jobs|webhooks)/'],
  ['request pipeline', '^src/http/'],
  ['write door', '^src/door/'],
  ['services', '^src/services\\.ts$'],
  ['outside systems', '^src/(email|pdf|rates|cards)/'],
  ['books', '^src/books/'],
  ['records beside the books', '^src/store/'],
  ['storage', '^src/db/'],
  ['foundation', '^src/(?!(server|app|services)\\.ts$)[^/]+\\.ts$'],
];

const forbidden = [
  {
    name: 'no-circular',
    severity: 'error',
    comment: 'Files that import each other in a loop, through any number of steps.',
    from: { path: '^src/' },
    to: { circular: true },
  },
  ...LAYERS.flatMap(([name, path], index) =>
    index === 0
      ? []
      : [
          {
            name: `no-upward-from-${name.replace(/ /g, '-')}`,
            severity: 'error',
            comment: `${name} may import only its own layer and the layers below it.`,
            from: { path },
            to: { path: LAYERS.slice(0, index).map(([, above]) => above) },
          },
        ],
  ),
  {
    name: 'no-src-to-test-or-bench',
    severity: 'error',
    comment: 'Shipped code never loads tests or benchmarks.',
    from: { path: '^src/' },
    to: { path: '^(test|bench)/' },
  },
];

module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // A file at the foundation layer may import another one there; the layer rule only looks up.
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
