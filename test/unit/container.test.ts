import { expect } from 'chai';
import { validate } from 'dockerfile-utils';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';

/**
 * The container files, checked without a Docker engine: the Dockerfile lints clean
 * (dockerfile-utils), copies only what exists, and keeps the promises the README makes
 * (non-root, /data volume, health check, SIGTERM); compose.yaml and .dockerignore likewise.
 */
describe('container files (Dockerfile, compose.yaml, .dockerignore)', () => {
  const read = (name: string) => readFileSync(join(projectRoot, name), 'utf8');
  const dockerfile = read('Dockerfile');
  const instructions = dockerfile
    .replace(/\s*\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages = instructions.reduce<string[][]>((all, line) => (line.startsWith('FROM ') ? [...all, [line]] : [...all.slice(0, -1), [...(all.at(-1) ?? []), line]]), []);

  it('lints with no problem at all', () => {
    expect(validate(dockerfile)).to.deep.equal([]);
  });

  it('builds in one stage and runs from another, both on one exact Node 24 LTS slim image', () => {
    const [build, final] = stages.map((stage) => stage[0]);
    const pinned = /^FROM node:(24\.\d+\.\d+)-bookworm-slim AS build$/.exec(build ?? '')?.[1];
    expect(pinned, build).to.be.a('string');
    expect(final).to.equal(`FROM node:${pinned}-bookworm-slim`);
    expect(stages[0]!.find((line) => line.startsWith('RUN npm ci '))).to.match(/^RUN npm ci && npm prune --omit=dev && /);
  });

  it('compiles nothing: no toolchain is installed in the build stage', () => {
    expect(stages[0]!.filter((line) => line.startsWith('RUN ')).join('\n')).not.to.match(/apt-get|g\+\+|python3|node-gyp/);
  });

  it('supports in engines.node the Node the image ships, and CI runs the tests on it', () => {
    const pinned = /^FROM node:(\d+)\.(\d+)\.(\d+)-bookworm-slim/m.exec(dockerfile)!.slice(1).map(Number);
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    const minimum = /^>=(\d+)\.(\d+)(?:\.(\d+))?$/.exec(engines)?.slice(1).map((part) => Number(part ?? 0));
    expect(minimum, engines).to.have.length(3);
    const order = (a: number[], b: number[]) => a.findIndex((part, index) => part !== b[index]);
    const first = order(minimum!, pinned);
    expect(first === -1 || minimum![first]! < pinned[first]!, `${engines} admits ${pinned.join('.')}`).to.equal(true);
    if (process.env['CI'] === 'true') expect(process.version).to.equal(`v${pinned.join('.')}`);
  });

  it('copies into the build only what the repository has', () => {
    for (const line of stages[0]!.filter((candidate) => candidate.startsWith('COPY '))) {
      for (const source of line.split(/\s+/).slice(1, -1)) expect(existsSync(join(projectRoot, source)), source).to.equal(true);
    }
  });

  it('runs as the unprivileged node user, keeps the books in the /data volume, checks /healthz, stops on SIGTERM', () => {
    const final = stages[1]!;
    expect(final).to.include('USER node');
    expect(final).to.include('VOLUME ["/data"]');
    expect(final.find((line) => line.startsWith('ENV '))).to.contain('DAYBOOK_DB=/data/daybook.sqlite').and.contain('HOST=0.0.0.0');
    expect(final.find((line) => line.startsWith('HEALTHCHECK '))).to.contain('/healthz');
    expect(final).to.include('STOPSIGNAL SIGTERM');
    expect(final.at(-1)).to.equal('CMD ["node", "--max-semi-space-size=8", "bin/daybook.js", "serve"]');
  });

  it('starts the server with the same node flags in the image, `npm start` and the systemd guide (docs/decisions.md "The server\'s memory")', () => {
    const imageFlags = (JSON.parse(stages[1]!.at(-1)!.replace(/^CMD /, '')) as string[]).slice(1, -2);
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start.split(' ');
    expect(imageFlags).to.deep.equal(['--max-semi-space-size=8']);
    expect(start.slice(1, start.indexOf('bin/daybook.js'))).to.deep.equal(imageFlags);
    expect(read('docs/deployment.md').replace(/\s+/g, ' ')).to.contain(`ExecStart=/usr/bin/node ${imageFlags.join(' ')} /opt/daybook/bin/daybook.js serve`);
  });

  it('compose.yaml keeps the volume, restarts the service, and has the SMTP setting; .dockerignore keeps books and secrets out', () => {
    const compose = read('compose.yaml');
    expect(compose).to.match(/^\s+restart: unless-stopped$/m);
    expect(compose).to.match(/^\s+- daybook-data:\/data$/m);
    expect(compose).to.match(/^\s+DAYBOOK_SMTP_URL: /m);
    expect(compose).to.match(/^volumes:\n\s+daybook-data:/m);
    const ignored = read('.dockerignore').split('\n');
    expect(ignored).to.include.members(['node_modules', 'data', '*.sqlite', '.env', '.git']);
  });
});
