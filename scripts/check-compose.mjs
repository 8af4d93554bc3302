// Checks the scale-out recipe in docker-compose.yml without a Docker engine: parses the file and
// verifies the shape docs/scale-out.md promises (PostgreSQL, Redis, two app replicas from the official
// node image running `npm ci && npm start`, a proxy in front, a health check on everything).
// Usage: node scripts/check-compose.mjs [path]   (default: docker-compose.yml at the project root)
// Exit 0 with one summary line; exit 1 with one line per problem on stderr.
import { readFileSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { parse } from 'yaml';

const root = resolve(import.meta.dirname, '..');
const file = resolve(process.argv[2] ?? resolve(root, 'docker-compose.yml'));
const rel = relative(process.cwd(), file);
const shown = rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;

const APPS = ['app1', 'app2'];
const REQUIRED = ['postgres', 'redis', ...APPS, 'proxy'];

const problems = [];
const problem = (where, message) => problems.push(`${shown}: ${where}: ${message}`);

let text;
try {
  text = readFileSync(file, 'utf8');
} catch (err) {
  process.stderr.write(`${shown}: cannot be read: ${err.code ?? err.message}\n`);
  process.exit(1);
}
let doc;
try {
  // merge: the app replicas share one definition through a YAML anchor and `<<:`.
  doc = parse(text, { merge: true, prettyErrors: true });
} catch (err) {
  process.stderr.write(`${shown}: cannot be read as YAML: ${String(err.message ?? err).split('\n')[0].replace(/:$/, '')}\n`);
  process.exit(1);
}

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const services = isObject(doc) && isObject(doc.services) ? doc.services : undefined;
if (!services) {
  process.stderr.write(`${shown}: no top-level "services" mapping\n`);
  process.exit(1);
}

/** `environment` as a mapping or as a list of KEY=value. */
function environmentOf(service) {
  const env = service.environment;
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((item) => {
        const s = String(item);
        const eq = s.indexOf('=');
        return eq < 0 ? [s, undefined] : [s.slice(0, eq), s.slice(eq + 1)];
      }),
    );
  }
  if (isObject(env)) return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null || v === undefined ? undefined : String(v)]));
  return {};
}

/** `depends_on` as { service: condition }; the short (list) syntax has no condition. */
function dependsOn(service) {
  const deps = service.depends_on;
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((d) => [String(d), 'service_started']));
  if (isObject(deps)) return Object.fromEntries(Object.entries(deps).map(([k, v]) => [k, isObject(v) && v.condition ? String(v.condition) : 'service_started']));
  return {};
}

/** `command` as one string, whether given as a string or as an exec array. */
function commandOf(service) {
  const c = service.command;
  if (Array.isArray(c)) return c.map(String).join(' ');
  return typeof c === 'string' ? c : '';
}

/** The official node image: node, node:<tag>, library/node… or docker.io/library/node… */
const isOfficialNode = (image) => typeof image === 'string' && /^(?:(?:docker\.io\/)?library\/)?node(?::[\w][\w.-]*)?(?:@sha256:[0-9a-f]{64})?$/.test(image);

for (const name of REQUIRED) if (!isObject(services[name])) problem(name, 'service is missing');

for (const [name, service] of Object.entries(services)) {
  if (!isObject(service)) {
    problem(name, 'service is not a mapping');
    continue;
  }
  const hc = service.healthcheck;
  if (!isObject(hc) || hc.disable === true) problem(name, 'has no healthcheck');
  else if (!hc.test || (Array.isArray(hc.test) && (hc.test.length === 0 || hc.test[0] === 'NONE'))) problem(name, 'healthcheck has no test');
  for (const dep of Object.keys(dependsOn(service))) if (!(dep in services)) problem(name, `depends on "${dep}", which is not a service`);
}

const postgres = isObject(services.postgres) ? services.postgres : undefined;
const pgEnv = postgres ? environmentOf(postgres) : {};

for (const name of APPS) {
  const app = services[name];
  if (!isObject(app)) continue;
  if (app.build !== undefined) problem(name, 'must not be built from a Dockerfile: use the official node image');
  if (!isOfficialNode(app.image)) problem(name, `image must be the official node image (node:<tag>), got ${JSON.stringify(app.image ?? null)}`);
  const command = commandOf(app).replace(/\s+/g, ' ');
  if (!command.includes('npm ci && npm start')) problem(name, `command must run "npm ci && npm start", got ${JSON.stringify(command || null)}`);

  const env = environmentOf(app);
  if (env.HOST !== '0.0.0.0' && env.HOST !== '::') problem(name, `HOST must be 0.0.0.0 so the proxy can reach it, got ${JSON.stringify(env.HOST ?? null)}`);

  const checkUrl = (variable, protocols, host, port) => {
    const value = env[variable];
    if (!value) return problem(name, `${variable} is not set`), undefined;
    let url;
    try {
      url = new URL(value);
    } catch {
      return problem(name, `${variable} is not a URL: ${JSON.stringify(value)}`), undefined;
    }
    if (!protocols.includes(url.protocol)) problem(name, `${variable} must use ${protocols.join(' or ')}, got ${url.protocol}`);
    if (url.hostname !== host) problem(name, `${variable} must point at the "${host}" service, got host ${JSON.stringify(url.hostname)}`);
    if (url.port !== '' && url.port !== port) problem(name, `${variable} must use port ${port}, got ${url.port}`);
    return url;
  };
  const db = checkUrl('DATABASE_URL', ['postgres:', 'postgresql:'], 'postgres', '5432');
  if (db) {
    const expect = (what, got, want) => {
      if (want !== undefined && got !== want) problem(name, `DATABASE_URL ${what} ${JSON.stringify(got)} differs from the postgres service's ${JSON.stringify(want)}`);
    };
    expect('user', decodeURIComponent(db.username), pgEnv.POSTGRES_USER);
    expect('password', decodeURIComponent(db.password), pgEnv.POSTGRES_PASSWORD);
    expect('database', decodeURIComponent(db.pathname.slice(1)), pgEnv.POSTGRES_DB ?? pgEnv.POSTGRES_USER);
  }
  checkUrl('REDIS_URL', ['redis:', 'rediss:'], 'redis', '6379');

  const deps = dependsOn(app);
  for (const dep of ['postgres', 'redis']) {
    if (!(dep in deps)) problem(name, `must depend on ${dep}`);
    else if (deps[dep] !== 'service_healthy') problem(name, `must depend on ${dep} with condition service_healthy, got ${deps[dep]}`);
  }
}

const proxy = services.proxy;
if (isObject(proxy)) {
  if (!Array.isArray(proxy.ports) || proxy.ports.length === 0) problem('proxy', 'exposes no port (ports)');
  const deps = dependsOn(proxy);
  for (const app of APPS) if (!(app in deps)) problem('proxy', `must depend on ${app}`);
}

if (problems.length > 0) {
  process.stderr.write(problems.join('\n') + '\n');
  process.exit(1);
}
process.stdout.write(`${shown}: ok (${Object.keys(services).join(', ')})\n`);
