// A stand-in for Pi's extension API, shared by the Pi package's node tests: the extension loaded
// the way Pi loads it (jiti, from Pi's own node_modules), its commands and event handlers
// recorded, its exec running the real pi-session. Not a test file itself (no `.test.mjs`).
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const EXTENSION_DIR = join(REPO, "exporter", "pi_extension");

/** Run `command` with process.env changed as given (the extension reads this process's). */
export async function withEnv(changes, command) {
  const before = Object.fromEntries(Object.keys(changes).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  try {
    return await command();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** A scratch project holding a copy of ``fixture`` as its session (its cwd the project),
 *  with a home and state folder of its own: { tmp, project, session, leaf, env }. */
export function projectWithSession(prefix, fixture) {
  const tmp = mkdtempSync(join(tmpdir(), prefix));
  const project = join(tmp, "project");
  for (const dir of [project, join(tmp, "home"), join(tmp, "state"), join(tmp, "tmp")]) mkdirSync(dir, { recursive: true });
  const session = join(project, "session.jsonl");
  const [header, ...rest] = readFileSync(fixture, "utf8").split("\n");
  writeFileSync(session, [JSON.stringify({ ...JSON.parse(header), cwd: project }), ...rest].join("\n"));
  const leaf = rest.filter((l) => l.trim()).map((l) => JSON.parse(l)).at(-1).id;
  const env = { PATH: process.env.PATH, HOME: join(tmp, "home"), XDG_STATE_HOME: join(tmp, "state"), PYTHONDONTWRITEBYTECODE: "1" };
  return { tmp, project, session, leaf, env };
}

/** What a test of the real CLI and Pi lacks (a fixture, Pi, pi-session), or undefined. */
export function whatIsMissing(fixture, piCli, piSession) {
  return (
    (!existsSync(fixture) && `fixture not found: ${fixture}`) ||
    (!piCli && "PI_HOME is not set") ||
    (!existsSync(piCli) && `Pi is not installed at ${piCli}`) ||
    (!piSession && "pi-session is not installed (set PI_SESSION_BIN)") ||
    undefined
  );
}

export function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The extension loaded the way Pi loads it, given a stand-in for Pi's API: `pi` and `ctx` hold
 * only what a test gives them, as an older or odder Pi would. Its exec runs the real pi-session
 * (or `exec`) and records, while it runs, what the context file was; `on` records the handlers.
 */
export async function loadWithFakePi(piCli, { api = {}, exec, env } = {}) {
  const piHome = resolve(dirname(piCli), "..", "..", "..", "..");
  const { createJiti } = await import(pathToFileURL(join(piHome, "node_modules", "jiti", "lib", "jiti.mjs")).href);
  const jiti = createJiti(import.meta.url, { moduleCache: false });
  const factory = await jiti.import(join(EXTENSION_DIR, "index.ts"), { default: true });
  const commands = {};
  const handlers = {};
  const calls = [];
  const pi = {
    registerCommand: (name, spec) => (commands[name] = spec),
    on: (event, handler) => (handlers[event] = handler),
    exec: async (cli, args, options) => {
      const at = args.indexOf("--agent-context");
      const file = at >= 0 ? args[at + 1] : undefined;
      calls.push({
        args,
        file,
        fileMode: file && statSync(file).mode & 0o777,
        dirMode: file && statSync(dirname(file)).mode & 0o777,
        data: file && JSON.parse(readFileSync(file, "utf8")),
      });
      if (exec) return exec(cli, args, options);
      const done = spawnSync(cli, args, { cwd: options.cwd, env, encoding: "utf8", timeout: options.timeout });
      return { stdout: done.stdout, stderr: done.stderr, code: done.status ?? 1, killed: false };
    },
    ...api,
  };
  factory(pi);
  return { commands, calls, handlers };
}

/** A command's context: a UI that records its notifications, and Pi's session and leaf. */
export function fakeCtx(cwd, session, leaf, extra = {}) {
  const notes = [];
  const ctx = {
    hasUI: true,
    cwd,
    ui: { notify: (message, level) => notes.push({ message, level }), setStatus: () => {} },
    sessionManager: { getSessionFile: () => session, getLeafId: () => leaf },
    ...extra,
  };
  return { ctx, notes };
}
