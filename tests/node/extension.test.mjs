// The Pi package in exporter/pi_extension, end to end through the real Pi (npm
// @mariozechner/pi-coding-agent, pinned by ../shared/tools/install-pi.sh):
//
//   node --test tests/node/extension.test.mjs
//
// `pi install` registers the package in a throwaway HOME, `pi --mode rpc` loads it with Pi's own
// extension loader, and slash commands sent as RPC prompts run /export-html and /share-html on a
// copy of a branched fixture session. Extension commands never call the model, so no API key or
// network is needed; sharing goes to the loopback fake gist API in tests/fakes/github.py.
//
// Inputs (all optional): PI_HOME (else install-pi.sh is run), PI_SESSION_BIN (else the repo's
// .venv / .venv-ci, $VIRTUAL_ENV or PATH), PI_SHARED_DIR (else ../shared). A missing Pi,
// pi-session, Python or fixture skips the tests locally and fails them when CI is set.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { fakeCtx, isExecutable, loadWithFakePi } from "./fake_pi.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SHARED = process.env.PI_SHARED_DIR || resolve(REPO, "..", "shared");
const FIXTURE = join(SHARED, "fixtures", "pi-branched-1.jsonl");
const EXTENSION_DIR = join(REPO, "exporter", "pi_extension");
const PI_CLI_IN_HOME = join("node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
const RPC_TIMEOUT_MS = 30_000;

// --- prerequisites ----------------------------------------------------------------------------

function onPath(name) {
  return (process.env.PATH ?? "")
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, name))
    .find(isExecutable);
}

function findPiCli() {
  let home = process.env.PI_HOME;
  if (!home) {
    // Cached after the first run; this is what CI does before exporting PI_HOME.
    const done = spawnSync("bash", [join(SHARED, "tools", "install-pi.sh")], { encoding: "utf8", timeout: 600_000 });
    home = done.status === 0 ? done.stdout.trim().split("\n").at(-1) : undefined;
    if (!home) return { missing: `install-pi.sh failed: ${(done.stderr || String(done.error)).slice(-500)}` };
  }
  const cli = join(home, PI_CLI_IN_HOME);
  return existsSync(cli) ? { cli } : { missing: `Pi is not installed under ${home}` };
}

function findPiSession() {
  const candidates = [
    process.env.PI_SESSION_BIN,
    join(REPO, ".venv", "bin", "pi-session"),
    join(REPO, ".venv-ci", "bin", "pi-session"),
    process.env.VIRTUAL_ENV && join(process.env.VIRTUAL_ENV, "bin", "pi-session"),
    onPath("pi-session"),
  ];
  const bin = candidates.find((c) => c && isExecutable(c));
  if (!bin) return { missing: "pi-session is not installed (set PI_SESSION_BIN or create .venv)" };
  // The fake gist server needs the same environment (it imports pytest and tests.fakes).
  const python = [join(dirname(bin), "python"), onPath("python3")].find((c) => c && isExecutable(c));
  return python ? { bin, python } : { missing: "no Python found to run the fake gist server" };
}

function prerequisites() {
  if (!existsSync(FIXTURE)) return { missing: `fixture not found: ${FIXTURE} (set PI_SHARED_DIR)` };
  const pi = findPiCli();
  if (pi.missing) return pi;
  const cli = findPiSession();
  if (cli.missing) return cli;
  return { piCli: pi.cli, piSession: cli.bin, python: cli.python };
}

const found = prerequisites();
const IN_CI = Boolean(process.env.CI);
// Locally a missing tool skips the suite; under CI it is an error (before() throws).
const suiteOptions = found.missing && !IN_CI ? { skip: found.missing } : {};

// --- helpers ----------------------------------------------------------------------------------

/** The loopback fake gist API, in a Python child that lives until its stdin closes. */
async function startFakeGitHub(python, tmp) {
  const script = `
import json, sys
from tests.fakes.github import FakeGitHub
# A second server that knows no valid token: every request gets 401 Bad credentials.
with FakeGitHub() as fake, FakeGitHub(tokens=("not-the-test-token",)) as deny:
    print(json.dumps({"url": fake.base_url, "token": fake.token, "denyUrl": deny.base_url}), flush=True)
    for line in sys.stdin:
        word, _, arg = line.strip().partition(" ")
        if word == "requests":
            print(json.dumps(fake.requests_to()), flush=True)
        elif word == "html":
            print(json.dumps(fake.content(arg)), flush=True)
`;
  const child = spawn(python, ["-c", script], {
    cwd: REPO,
    env: { PATH: process.env.PATH, HOME: tmp, PYTHONDONTWRITEBYTECODE: "1" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines = jsonLines(child.stdout);
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const ask = async (question) => {
    if (question) child.stdin.write(`${question}\n`);
    return withTimeout(lines.next(), 10_000, () => `fake GitHub did not answer: ${stderr}`);
  };
  const info = await ask();
  const close = () => {
    child.stdin.end(); // the script's loop ends and the servers shut down
    setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
  };
  return { ...info, ask, close };
}

/** Yields one parsed JSON object per LF-terminated line (Pi's RPC framing is strict LF). */
function jsonLines(stream) {
  let buffer = "";
  const queue = [];
  const waiting = [];
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    buffer += chunk;
    let at;
    while ((at = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, at).replace(/\r$/, "");
      buffer = buffer.slice(at + 1);
      if (!line.trim()) continue;
      let value;
      try {
        value = JSON.parse(line);
      } catch {
        value = { type: "unparsed", line };
      }
      if (waiting.length) waiting.shift()(value);
      else queue.push(value);
    }
  });
  return { next: () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((r) => waiting.push(r))) };
}

function withTimeout(promise, ms, explain) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(explain())), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** `pi --mode rpc` with a JSONL client: request/response by id, notifications collected. */
class PiRpc {
  constructor(piCli, args, env, cwd) {
    this.child = spawn(process.execPath, [piCli, "--mode", "rpc", ...args], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    this.stderr = "";
    this.child.stderr.on("data", (d) => (this.stderr += d));
    this.notifications = [];
    this.extensionErrors = [];
    this.pending = new Map();
    this.nextId = 1;
    this.exited = new Promise((r) => this.child.on("exit", (code, signal) => r({ code, signal })));
    const lines = jsonLines(this.child.stdout);
    const pump = async () => {
      for (;;) {
        const msg = await lines.next();
        if (msg.type === "response" && this.pending.has(msg.id)) {
          this.pending.get(msg.id)(msg);
          this.pending.delete(msg.id);
        } else if (msg.type === "extension_ui_request" && msg.method === "notify") {
          this.notifications.push({ message: msg.message, level: msg.notifyType ?? "info" });
        } else if (msg.type === "extension_error") {
          this.extensionErrors.push(msg);
        }
      }
    };
    pump();
  }

  request(command) {
    const id = `req-${this.nextId++}`;
    const response = new Promise((r) => this.pending.set(id, r));
    this.child.stdin.write(`${JSON.stringify({ ...command, id })}\n`);
    return withTimeout(response, RPC_TIMEOUT_MS, () => `no response to ${JSON.stringify(command)}; pi stderr: ${this.stderr}`);
  }

  /** Run a slash command; Pi answers the prompt only after the handler returned. */
  async command(text) {
    const start = this.notifications.length;
    const response = await this.request({ type: "prompt", message: text });
    assert.equal(response.success, true, `prompt ${text} failed: ${JSON.stringify(response)}`);
    assert.deepEqual(this.extensionErrors, [], "the extension threw into Pi");
    return this.notifications.slice(start);
  }

  async close() {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5_000);
    await this.exited;
    clearTimeout(timer);
  }
}

/**
 * For every `data-entry-id` on the page: is it inside a `<details class="branch ...">` block?
 * The main transcript (root to the chosen leaf) is exactly the entries outside those blocks.
 */
function branchMembership(html) {
  const inBranch = new Map();
  const stack = [];
  const tokens = /<details\b([^>]*)>|<\/details\s*>|data-entry-id="([^"]+)"/g;
  for (const m of html.matchAll(tokens)) {
    if (m[0].startsWith("</")) stack.pop();
    else if (m[0].startsWith("<details")) stack.push(/class="branch\b/.test(m[1]));
    else inBranch.set(m[2], [...(inBranch.get(m[2]) ?? []), stack.includes(true)]);
  }
  return inBranch;
}

function assertMainLineEndsAt(html, leaf, notOnMainLine) {
  const membership = branchMembership(html);
  assert.ok(membership.has(leaf), `entry ${leaf} is not on the page`);
  assert.ok(membership.get(leaf).every((inside) => !inside), `entry ${leaf} is inside a branch block`);
  assert.ok(
    membership.get(notOnMainLine).every((inside) => inside),
    `entry ${notOnMainLine} (the file's last leaf) should be folded into a branch block`,
  );
}

/** Session entries, plus a branch tip that is not the file's last entry (Pi's default leaf). */
function describeSession(path) {
  const entries = readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l))
    .filter((e) => e.type !== "session");
  const parents = new Set(entries.map((e) => e.parentId));
  const lastLeaf = entries.at(-1).id;
  // An assistant tip: navigating to it makes it the leaf (a user entry would select its parent).
  const otherLeaf = entries.find(
    (e) => !parents.has(e.id) && e.id !== lastLeaf && e.type === "message" && e.message.role === "assistant",
  )?.id;
  return { lastLeaf, otherLeaf };
}

// A tiny second extension, loaded with -e: the RPC protocol has no tree navigation, so this
// moves Pi's in-memory leaf the way /tree does (ctx.navigateTree, no summary: no model call).
const NAVIGATE_EXTENSION = `
export default function (pi) {
  pi.registerCommand("test-goto", {
    handler: async (args, ctx) => {
      await ctx.navigateTree(args.trim(), { summarize: false });
      ctx.ui.notify("leaf " + ctx.sessionManager.getLeafId(), "info");
    },
  });
  pi.registerCommand("test-prompt", {
    handler: async (_args, ctx) => {
      const line = ctx.getSystemPrompt().split(String.fromCharCode(10)).find((l) => l.trim().length > 20);
      ctx.ui.notify(JSON.stringify({ line, tools: pi.getAllTools().map((t) => t.name) }), "info");
    },
  });
}
`;

/**
 * A throwaway HOME and project folder, and in it a copy of the fixture session whose header
 * points at that folder: Pi may append to the session file, and refuses a session whose cwd
 * does not exist.
 */
function makeProject(prefix) {
  const tmp = mkdtempSync(join(tmpdir(), prefix));
  const home = join(tmp, "home");
  const project = join(tmp, "project");
  for (const dir of [home, project, join(tmp, "state"), join(tmp, "tmp")]) mkdirSync(dir, { recursive: true });
  const session = join(project, "session.jsonl");
  const [header, ...rest] = readFileSync(FIXTURE, "utf8").split("\n");
  writeFileSync(session, [JSON.stringify({ ...JSON.parse(header), cwd: project }), ...rest].join("\n"));
  return { tmp, home, project, session };
}

/** Install the package the way users do; Pi records the folder in ~/.pi/agent/settings.json. */
function installPackage(env) {
  const install = spawnSync(process.execPath, [found.piCli, "install", EXTENSION_DIR], { env, encoding: "utf8", timeout: 30_000 });
  assert.equal(install.status, 0, `pi install failed: ${install.stderr}`);
}

// --- the tests --------------------------------------------------------------------------------

describe("Pi package: /export-html and /share-html", suiteOptions, () => {
  let tmp;
  let project;
  let session;
  let fake;
  let pi;
  let env;
  let tree;

  before(async () => {
    if (found.missing) throw new Error(`${found.missing} (CI is set, so this is an error)`);
    let home;
    ({ tmp, home, project, session } = makeProject("pi-ext-test-"));
    tree = describeSession(session);
    assert.ok(tree.otherLeaf, "the fixture should have a second branch");

    fake = await startFakeGitHub(found.python, tmp);

    // Only what Pi and the CLI need: no user config, API keys or tokens from the outer env.
    env = {
      PATH: process.env.PATH,
      HOME: home,
      TMPDIR: join(tmp, "tmp"), // jiti's compile cache
      PI_OFFLINE: "1",
      PI_TELEMETRY: "0",
      XDG_STATE_HOME: join(tmp, "state"), // share state (gist ids per session)
      GH_ENTERPRISE_TOKEN: fake.token, // a loopback API is not github.com
      PI_SESSION_BIN: found.piSession,
      // Default share options from the environment; options typed after /share-html win.
      PI_SESSION_SHARE_ARGS: `--api-url ${fake.url}`,
      PYTHONDONTWRITEBYTECODE: "1",
    };

    installPackage(env);
    const helper = join(tmp, "navigate.js");
    writeFileSync(helper, NAVIGATE_EXTENSION);
    pi = new PiRpc(found.piCli, ["--session", session, "-e", helper], env, project);
  });

  after(async () => {
    await pi?.close();
    fake?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test("pi install registers both commands from the package", async () => {
    const settings = JSON.parse(readFileSync(join(env.HOME, ".pi", "agent", "settings.json"), "utf8"));
    assert.equal(settings.packages.length, 1);
    const { data } = await pi.request({ type: "get_commands" });
    const ours = data.commands.filter((c) => c.sourceInfo?.baseDir === EXTENSION_DIR);
    assert.deepEqual(ours.map((c) => c.name).sort(), ["export-html", "live-html", "share-html"]);
    assert.ok(ours.every((c) => c.source === "extension" && c.sourceInfo.origin === "package"));
  });

  test("/export-html writes the page for Pi's current leaf, not the file's last entry", async () => {
    const moved = await pi.command(`/test-goto ${tree.otherLeaf}`);
    assert.deepEqual(moved, [{ message: `leaf ${tree.otherLeaf}`, level: "info" }]);

    const target = join(tmp, "out dir", "my page.html"); // quoting keeps the spaces
    mkdirSync(dirname(target));
    const notes = await pi.command(`/export-html "${target}"`);
    assert.deepEqual(notes, [{ message: `Exported to ${target}`, level: "info" }]);
    assertMainLineEndsAt(readFileSync(target, "utf8"), tree.otherLeaf, tree.lastLeaf);

    // A name that ends in a space is written and said as it is (it was "failed: ... killed?")
    const spaced = join(tmp, "out dir", "trail .html ");
    const [said] = await pi.command(`/export-html "${spaced}"`);
    assert.deepEqual(said, { message: `Exported to ${spaced}`, level: "info" });
    assert.match(readFileSync(spaced, "utf8"), /data-entry-id/);

    // No path: the CLI's default name, in Pi's working folder.
    const [plain] = await pi.command("/export-html --theme dark");
    const expected = join(project, "pi-session-session.html");
    assert.deepEqual(plain, { message: `Exported to ${expected}`, level: "info" });
    assert.match(readFileSync(expected, "utf8"), /data-entry-id/);
  });

  test("/export-html passes Pi's system prompt and tools (not in the session file) to the page", async () => {
    const [said] = await pi.command("/test-prompt");
    const { line, tools } = JSON.parse(said.message);
    assert.ok(line && tools.includes("bash"), said.message);
    const target = join(tmp, "with-context.html");
    const notes = await pi.command(`/export-html ${target}`);
    assert.deepEqual(notes, [{ message: `Exported to ${target}`, level: "info" }]);
    const html = readFileSync(target, "utf8");
    const escaped = line.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&#34;").replace(/'/g, "&#39;");
    assert.ok(html.includes('<details class="ac-prompt"><summary><b>System prompt</b>'), "the prompt's card");
    assert.ok(html.includes(escaped), `the page lacks the prompt's line ${line}`);
    assert.ok(html.includes('<details class="ac-tools">'), "the tools' card");
    for (const name of tools) assert.ok(html.includes(`<code>${name}</code>`), name);
    // the temp folder it was passed in is gone (Pi's TMPDIR is this test's)
    assert.deepEqual(readdirSync(join(tmp, "tmp")).filter((n) => n.startsWith("pi-session-context-")), []);
  });

  test("/share-html uploads the current branch to the fake gist API and reports the link", async () => {
    await pi.command(`/test-goto ${tree.otherLeaf}`);
    const notes = await pi.command("/share-html"); // --api-url comes from PI_SESSION_SHARE_ARGS
    assert.equal(notes.length, 1, JSON.stringify(notes));
    const [{ message, level }] = notes;
    assert.equal(level, "info");
    const link = message.match(/^Shared: (http:\/\/127\.0\.0\.1:\d+\/gist-html\/(\w+))$/m);
    assert.ok(link, message);
    assert.ok(link[1].startsWith(fake.url), message);
    assert.match(message, /^Gist: http:\/\/127\.0\.0\.1/m);
    assert.match(message, /gist created \(secret\)/);
    assert.deepEqual(await fake.ask("requests"), ["POST /gists"]);
    assertMainLineEndsAt(await fake.ask(`html ${link[2]}`), tree.otherLeaf, tree.lastLeaf);

    // Sharing again updates the same gist, with explicit options this time.
    const [again] = await pi.command(`/share-html --api-url ${fake.url} --no-thinking`);
    assert.match(again.message, /gist updated \(secret\)/);
    assert.deepEqual(await fake.ask("requests"), [
      "POST /gists", `GET /gists/${link[2]}`, `PATCH /gists/${link[2]}`,
    ]);
  });

  test("failures come back as one error notification and Pi keeps going", async () => {
    const cases = [
      // Typed options win over PI_SESSION_SHARE_ARGS: this server rejects the token.
      [`/share-html --api-url ${fake.denyUrl}`, /^\/share-html failed: GitHub rejected the token \(401\)/],
      ["/share-html --no-such-option", /^\/share-html failed: no such option.*--no-such-option/],
      ['/export-html "unclosed', /^\/export-html failed: unterminated " quote/],
      // The success message reads the written path: the page on stdout or help has none.
      ["/export-html -o -", /^\/export-html failed: the page goes to a file: give a path, not -/],
      ["/export-html -", /^\/export-html failed: the page goes to a file/],
      ["/export-html --help", /^\/export-html failed: see `pi-session export --help`/],
      // Help is not a share link either (it came back as an "info" notification).
      ["/share-html --help", /^\/share-html failed: see `pi-session share --help`/],
    ];
    for (const [command, expected] of cases) {
      const notes = await pi.command(command);
      assert.equal(notes.length, 1, `${command}: ${JSON.stringify(notes)}`);
      assert.equal(notes[0].level, "error", command);
      assert.match(notes[0].message, expected);
    }
    const state = await pi.request({ type: "get_state" });
    assert.equal(state.success, true);
    assert.equal(state.data.sessionFile, session);
  });

  test("a quoting mistake in PI_SESSION_EXPORT_ARGS names the variable", async () => {
    const odd = new PiRpc(found.piCli, ["--session", session], { ...env, PI_SESSION_EXPORT_ARGS: '--theme "dark' }, project);
    try {
      const notes = await odd.command("/export-html");
      assert.equal(notes.length, 1, JSON.stringify(notes));
      assert.equal(notes[0].level, "error");
      assert.match(notes[0].message, /^\/export-html failed: PI_SESSION_EXPORT_ARGS: unterminated " quote/);
    } finally {
      await odd.close();
    }
  });

  test("a quoting mistake never shows the text back: it may hold a token", async () => {
    const token = "ghp_SECRETSECRETSECRETSECRETSECRET123456";
    // Typed: the notification (and the RPC stream) must not carry the token.
    const typed = await pi.command(`/share-html --token "${token}`);
    assert.deepEqual(typed, [{ message: '/share-html failed: unterminated " quote (opened at character 9)', level: "error" }]);
    // From the environment, which the user never saw on screen.
    const shareArgs = `--api-url ${fake.url} --token '${token}`;
    const odd = new PiRpc(found.piCli, ["--session", session], { ...env, PI_SESSION_SHARE_ARGS: shareArgs }, project);
    try {
      const notes = await odd.command("/share-html");
      assert.deepEqual(notes, [{
        message: `/share-html failed: PI_SESSION_SHARE_ARGS: unterminated ' quote (opened at character ${shareArgs.indexOf("'") + 1})`,
        level: "error",
      }]);
    } finally {
      await odd.close();
    }
  });

  test("-o - and --help are refused in PI_SESSION_EXPORT_ARGS / PI_SESSION_SHARE_ARGS too", async () => {
    const odd = new PiRpc(
      found.piCli,
      ["--session", session],
      { ...env, PI_SESSION_EXPORT_ARGS: "-o -", PI_SESSION_SHARE_ARGS: `--api-url ${fake.url} --help` },
      project,
    );
    try {
      assert.deepEqual(await odd.command("/export-html"), [{
        message: "/export-html failed: PI_SESSION_EXPORT_ARGS: the page goes to a file: give a path, not - (stdout)",
        level: "error",
      }]);
      assert.deepEqual(await odd.command("/share-html"), [{
        message: "/share-html failed: PI_SESSION_SHARE_ARGS: see `pi-session share --help` in a terminal for the options",
        level: "error",
      }]);
    } finally {
      await odd.close();
    }
  });

  test("a backslash keeps a space or a quote in a word, as in a shell", async () => {
    const notes = await pi.command("/export-html it\\'s\\ my\\ page.html --theme dark");
    const expected = join(project, "it's my page.html");
    assert.deepEqual(notes, [{ message: `Exported to ${expected}`, level: "info" }]);
    assert.match(readFileSync(expected, "utf8"), /data-entry-id/);
  });

  test("/share-html --delete removes a gist without the session or --leaf; dry runs say what they did", async () => {
    // --no-thinking as the session's first share had: without it, the share is refused
    // (it would put back what that gist left out)
    const [shared] = await pi.command("/share-html --new --no-thinking");
    const id = shared.message.match(/^Shared: .*\/gist-html\/(\w+)$/m)?.[1];
    assert.ok(id, shared.message);

    const [dry] = await pi.command(`/share-html --delete ${id} --dry-run`);
    assert.deepEqual(dry, { message: `dry run: would delete gist ${id}; nothing sent`, level: "info" });
    assert.notEqual((await fake.ask("requests")).at(-1), `DELETE /gists/${id}`);

    // --api-url comes from PI_SESSION_SHARE_ARGS, as for sharing.
    const deleted = await pi.command(`/share-html --delete ${id}`);
    assert.deepEqual(deleted, [{ message: `Deleted gist ${id}`, level: "info" }]);
    assert.equal((await fake.ask("requests")).at(-1), `DELETE /gists/${id}`);

    const [written] = await pi.command("/share-html --dry-run --no-thinking");
    assert.equal(written.level, "info", written.message);
    // where the file is (it listed a bare name), and that nothing was sent, first
    assert.equal(
      written.message.split("\n")[0].replace(/ \([0-9,]+ bytes would be uploaded\)$/, ""),
      `Dry run, nothing sent: wrote ${join(project, "pi-session-share-session.html")}`,
    );
    assert.ok(existsSync(join(project, "pi-session-share-session.html")));
    assert.equal(written.message.split("\n")[0].match(/nothing sent/g)?.length, 1, "said once");
  });

  test("a pi-session killed by a signal is an error, not a success (Pi's exec calls it exit code 0)", async () => {
    const killed = join(tmp, "killed-cli");
    writeFileSync(
      killed,
      `#!/bin/sh
case " $* " in
  *" --partial "*) echo partial; echo "pi-session: gist created (secret)" >&2; kill -TERM $$ ;;
esac
kill -KILL $$
`,
      { mode: 0o755 },
    );
    const odd = new PiRpc(found.piCli, ["--session", session], { ...env, PI_SESSION_BIN: killed }, project);
    try {
      for (const command of [
        "/export-html", "/export-html --partial", "/export-html page.html",
        "/share-html", "/share-html --partial", "/share-html --dry-run", "/share-html --delete abc123",
      ]) {
        const what = command.split(" ")[0];
        assert.deepEqual(
          await odd.command(command),
          [{ message: `${what} failed: pi-session ended without a result (killed?)`, level: "error" }],
          command,
        );
      }
    } finally {
      await odd.close();
    }
  });

  test("a pi-session that cannot start at all says so", async () => {
    const broken = join(tmp, "broken-cli"); // a venv's console script after its Python is gone
    writeFileSync(broken, "#!/nonexistent/python3\nprint(1)\n", { mode: 0o755 });
    const odd = new PiRpc(found.piCli, ["--session", session], { ...env, PI_SESSION_BIN: broken }, project);
    try {
      for (const what of ["export", "share"]) {
        assert.deepEqual(await odd.command(`/${what}-html`), [{
          message:
            `/${what}-html failed: could not run ${broken} ` +
            "(broken installation? reinstall pi-session-export or set PI_SESSION_BIN)",
          level: "error",
        }]);
      }
    } finally {
      await odd.close();
    }
  });

  test("without pi-session on PATH, /export-html says how to install it", async () => {
    const emptyBin = join(tmp, "empty-bin");
    mkdirSync(emptyBin, { recursive: true });
    const { PI_SESSION_BIN: _unused, ...rest } = env;
    const bare = new PiRpc(found.piCli, ["--session", session], { ...rest, PATH: emptyBin }, project);
    try {
      const notes = await bare.command("/export-html");
      assert.equal(notes.length, 1, JSON.stringify(notes));
      assert.equal(notes[0].level, "error");
      assert.match(notes[0].message, /pi-session is not installed.*pip install pi-session-export/);
    } finally {
      await bare.close();
    }
  });

  test("installed from a wheel, it runs the pi-session next to it with the exact arguments", { skip: process.platform === "win32" }, async () => {
    // The layout pip gives: <venv>/lib/pythonX.Y/site-packages/exporter/pi_extension and
    // <venv>/bin/pi-session. Here pi-session is a stand-in that records its arguments.
    const venv = join(tmp, "venv");
    const packageDir = join(venv, "lib", "python3.12", "site-packages", "exporter", "pi_extension");
    cpSync(EXTENSION_DIR, packageDir, { recursive: true });
    const record = join(tmp, "argv.json");
    const fakeCli = join(venv, "bin", "pi-session");
    mkdirSync(dirname(fakeCli));
    writeFileSync(
      fakeCli,
      `#!${process.execPath}
const args = process.argv.slice(2);
const fs = require("node:fs");
const path = require("node:path");
fs.writeFileSync(process.env.FAKE_CLI_RECORD, JSON.stringify(args));
const at = args.indexOf("--agent-context");
if (at >= 0) {
  const file = args[at + 1];
  fs.writeFileSync(process.env.FAKE_CLI_RECORD + ".context", JSON.stringify({
    file, data: JSON.parse(fs.readFileSync(file, "utf8")),
    fileMode: fs.statSync(file).mode & 0o777, dirMode: fs.statSync(path.dirname(file)).mode & 0o777,
  }));
}
if (args[0] === "export") {
  fs.writeFileSync("written.html", "<!doctype html>");
  console.log("written.html");
} else if (args.includes("--delete")) console.log("Deleted gist " + args[args.indexOf("--delete") + 1]);
else console.log("Gist: https://gist.example/abc\\nView: https://view.example/?abc");
`,
      { mode: 0o755 },
    );
    const emptyBin = join(tmp, "empty-bin-2");
    mkdirSync(emptyBin);
    const home = join(tmp, "home-2"); // without the package installed above (names would clash)
    mkdirSync(home);
    const { PI_SESSION_BIN: _unused, ...rest } = env;
    const piEnv = {
      ...rest,
      HOME: home,
      PATH: emptyBin, // so only the bundled lookup can find it
      FAKE_CLI_RECORD: record,
      PI_SESSION_EXPORT_ARGS: "--no-embed",
      PI_SESSION_SHARE_ARGS: `--viewer-url 'https://view.example/?{id}' --api-url=https://ghe.example/api/v3 --token gh-token`,
    };
    const wheelPi = new PiRpc(found.piCli, ["--session", session, "-e", packageDir, "-e", join(tmp, "navigate.js")], piEnv, project);
    // The context file is passed after --leaf; it is private while the CLI runs, and gone after.
    const argv = () => {
      const args = JSON.parse(readFileSync(record, "utf8"));
      if (args[0] === "share" && args.includes("--delete")) {
        assert.ok(!args.includes("--agent-context"), "--delete takes no context");
        return args;
      }
      assert.equal(args[4], "--agent-context", JSON.stringify(args));
      const seen = JSON.parse(readFileSync(`${record}.context`, "utf8"));
      assert.equal(seen.file, args[5]);
      assert.match(seen.file, /pi-session-context-[^/]+\/agent-context\.json$/);
      assert.equal(seen.fileMode, 0o600);
      assert.equal(seen.dirMode, 0o700);
      assert.equal(typeof seen.data.systemPrompt, "string");
      assert.ok(seen.data.tools.some((t) => t.name === "bash" && t.parameters?.properties?.command), "bash and its schema");
      assert.ok(seen.data.activeTools.includes("bash"));
      assert.ok(!existsSync(dirname(seen.file)), "the context folder is removed after the CLI returns");
      args.splice(4, 2);
      return args;
    };
    try {
      await wheelPi.command(`/test-goto ${tree.otherLeaf}`);
      const [exported] = await wheelPi.command("/export-html ~/pages/out.html --theme dark");
      assert.deepEqual(exported, { message: `Exported to ${join(project, "written.html")}`, level: "info" });
      assert.deepEqual(argv(), [
        "export", session, "--leaf", tree.otherLeaf, "--no-embed",
        "-o", join(home, "pages", "out.html"), "--theme", "dark",
      ]);
      // `~` in an -o option's value as well: no shell expands it (it was a folder "~")
      await wheelPi.command("/export-html -o ~/pages/o2.html --output=~/pages/o3.html");
      assert.deepEqual(argv().slice(-3), ["-o", join(home, "pages", "o2.html"), `--output=${join(home, "pages", "o3.html")}`]);
      const [shared] = await wheelPi.command("/share-html --public");
      assert.deepEqual(shared, { message: "Shared: https://view.example/?abc\nGist: https://gist.example/abc", level: "info" });
      assert.deepEqual(argv(), [
        "share", session, "--leaf", tree.otherLeaf, "--viewer-url", "https://view.example/?{id}",
        "--api-url=https://ghe.example/api/v3", "--token", "gh-token", "--public",
      ]);
      // --delete takes no session, --leaf or sharing options (the CLI refuses them); the API and
      // token from PI_SESSION_SHARE_ARGS still apply.
      const [deleted] = await wheelPi.command("/share-html --delete abc");
      assert.deepEqual(deleted, { message: "Deleted gist abc", level: "info" });
      assert.deepEqual(argv(), ["share", "--api-url=https://ghe.example/api/v3", "--token", "gh-token", "--delete", "abc"]);
    } finally {
      await wheelPi.close();
    }
  });
});

// --- the agent context with a stand-in for Pi's API -------------------------------------------

describe("Pi package: the system prompt and tools, with a stand-in for Pi's API", suiteOptions, () => {
  let tmp;
  let project;
  let session;
  let leaf;
  let env; // the CLI's: no user config, tokens or share state from the outer environment
  const binBefore = process.env.PI_SESSION_BIN;

  before(() => {
    if (found.missing) throw new Error(`${found.missing} (CI is set, so this is an error)`);
    let home;
    ({ tmp, home, project, session } = makeProject("pi-ext-context-"));
    leaf = describeSession(session).lastLeaf;
    process.env.PI_SESSION_BIN = found.piSession; // the extension's lookup reads this process's
    env = { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: join(tmp, "state"), PYTHONDONTWRITEBYTECODE: "1" };
  });

  after(() => {
    if (binBefore === undefined) delete process.env.PI_SESSION_BIN;
    else process.env.PI_SESSION_BIN = binBefore;
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  const secret = `ghp_${"a1B2c3D4e5".repeat(3)}x9Y8z7`; // 36 characters after ghp_
  const tools = [
    { name: "bash", description: "Run <b>a</b> command", parameters: { type: "object", properties: { command: { type: "string", description: "What to run" } }, required: ["command"] } },
    { name: "grep", description: "Search files", parameters: { type: "object", properties: { pattern: { type: "string" } } } },
  ];

  test("the file is private while the CLI runs, removed after, and the page shows the prompt", async () => {
    const prompt = `You are a test agent.\nUse <tools> & ${secret} with care.`;
    const { commands, calls } = await loadWithFakePi(found.piCli, {
      api: { getAllTools: () => tools, getActiveTools: () => ["bash"] },
      env,
    });
    const { ctx, notes } = fakeCtx(project, session, leaf, { getSystemPrompt: () => prompt });
    const target = join(tmp, "fake-pi.html");
    await commands["export-html"].handler(target, ctx);
    // the token in the prompt is on a page made without --redact: the CLI's warning reaches Pi
    const inClear =
      "warning: the page holds 1 credential of a known format in clear (github-token); " +
      "--redact replaces them, as share does by default";
    assert.deepEqual(notes, [{ message: `Exported to ${target}\n${inClear}`, level: "warning" }]);
    assert.equal(calls.length, 1);
    const [call] = calls;
    assert.deepEqual(call.args.slice(0, 5), ["export", session, "--leaf", leaf, "--agent-context"]);
    assert.equal(call.fileMode, 0o600);
    assert.equal(call.dirMode, 0o700);
    assert.deepEqual(call.data, { systemPrompt: prompt, tools, activeTools: ["bash"] });
    assert.ok(!existsSync(dirname(call.file)), "the context folder is removed");
    const html = readFileSync(target, "utf8");
    assert.ok(html.includes("You are a test agent.\nUse &lt;tools&gt; &amp; "), "the prompt, escaped");
    assert.ok(html.includes(secret), "a plain export keeps the prompt as it is");
    assert.ok(/<b>Tools<\/b> <span class="muted">\(2, 1 active\)/.test(html), "2 tools, 1 active");
    assert.ok(/<li class="ac-tool inactive"><details><summary><code>grep<\/code>/.test(html), "grep inactive");

    // /share-html redacts it with the session: the token is not in the dry run's page
    const shared = fakeCtx(project, session, leaf, { getSystemPrompt: () => prompt });
    await commands["share-html"].handler("--dry-run", shared.ctx);
    assert.equal(shared.notes.length, 1, JSON.stringify(shared.notes));
    const page = readFileSync(join(project, "pi-session-share-session.html"), "utf8");
    assert.ok(page.includes("You are a test agent."), "the shared page has the prompt");
    assert.ok(!page.includes(secret), "the dry run's page holds the token");
    assert.ok(/\[REDACTED:github-token:\d+\]/.test(page), "a placeholder in its place");
    assert.ok(!existsSync(dirname(calls[1].file)));
  });

  test("a Pi without getSystemPrompt or getAllTools, or whose calls throw, still exports", async () => {
    const cases = [
      { api: {}, extra: {}, passed: false },
      { api: { getAllTools: () => { throw new Error("no"); }, getActiveTools: () => { throw new Error("no"); } },
        extra: { getSystemPrompt: () => { throw new Error("no"); } }, passed: false },
      { api: { getAllTools: () => tools }, extra: {}, passed: true }, // tools but no prompt
    ];
    for (const [index, { api, extra, passed }] of cases.entries()) {
      const { commands, calls } = await loadWithFakePi(found.piCli, { api, env });
      const { ctx, notes } = fakeCtx(project, session, leaf, extra);
      const target = join(tmp, `old-pi-${index}.html`);
      await commands["export-html"].handler(target, ctx);
      assert.deepEqual(notes, [{ message: `Exported to ${target}`, level: "info" }], `case ${index}`);
      assert.equal(calls[0].args.includes("--agent-context"), passed, `case ${index}`);
      const html = readFileSync(target, "utf8");
      assert.equal(html.includes('class="ac-prompt"'), false, `case ${index}`);
      assert.equal(html.includes('class="ac-tools"'), passed, `case ${index}`);
    }
  });

  test("the file is removed when the CLI fails or Pi's exec throws", async () => {
    for (const exec of [
      async () => ({ stdout: "", stderr: "pi-session: error: boom\n", code: 2, killed: false }),
      async () => { throw new Error("exec broke"); },
    ]) {
      const { commands, calls } = await loadWithFakePi(found.piCli, {
        api: { getAllTools: () => tools, getActiveTools: () => [] },
        exec,
      });
      const { ctx, notes } = fakeCtx(project, session, leaf, { getSystemPrompt: () => "prompt" });
      await commands["export-html"].handler("", ctx);
      assert.equal(notes.length, 1);
      assert.equal(notes[0].level, "error");
      assert.ok(calls[0].file, "a context was passed");
      assert.ok(!existsSync(dirname(calls[0].file)), "the context folder is removed");
    }
  });
});

// --- /live-html --------------------------------------------------------------------------------

/** A line as Pi appends it: a prompt under the file's last entry. */
function appendPrompt(file, id, text) {
  const last = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l)).at(-1);
  const line = {
    type: "message",
    id,
    parentId: last.type === "session" ? null : last.id,
    timestamp: new Date().toISOString(),
    message: { role: "user", content: text, timestamp: Date.now() },
  };
  writeFileSync(file, `${readFileSync(file, "utf8")}${JSON.stringify(line)}\n`);
}

async function get(url) {
  const response = await fetch(url, { cache: "no-store" });
  return { status: response.status, text: await response.text() };
}

async function until(what, check, ms = 20_000) {
  const end = Date.now() + ms;
  for (;;) {
    const result = await check().catch(() => false);
    if (result) return result;
    if (Date.now() > end) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const refused = (url) => get(url).then(() => false, () => true);

/** The context folders the extension made in `dir` (its TMPDIR) and has not removed. */
const contextFolders = (dir) => readdirSync(dir).filter((name) => name.startsWith("pi-session-context-"));

/** The page's System prompt and Tools cards (the section, or "" when it has none). */
function cardsOf(html) {
  const start = html.indexOf('<section class="agent-context"');
  return start < 0 ? "" : html.slice(start, html.indexOf("</section>", start));
}

describe("Pi package: /live-html", suiteOptions, () => {
  let tmp;
  let project;
  let session;
  let pi;
  let env;

  before(async () => {
    if (found.missing) throw new Error(`${found.missing} (CI is set, so this is an error)`);
    let home;
    ({ tmp, home, project, session } = makeProject("pi-live-test-"));
    env = {
      PATH: process.env.PATH,
      HOME: home,
      TMPDIR: join(tmp, "tmp"),
      PI_OFFLINE: "1",
      PI_TELEMETRY: "0",
      PI_SESSION_BIN: found.piSession,
      PYTHONDONTWRITEBYTECODE: "1",
      // --open's browser: a script that notes each address it is given
      BROWSER: join(tmp, "browser.sh"),
    };
    writeFileSync(env.BROWSER, `#!/bin/sh\necho "$1" >> "${join(tmp, "opened.log")}"\n`, { mode: 0o755 });
    installPackage(env);
    pi = new PiRpc(found.piCli, ["--session", session], env, project);
  });

  after(async () => {
    await pi?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  let url;

  test("/live-html serves the session on 127.0.0.1 and makes the page again as it grows", async () => {
    const [started] = await pi.command("/live-html");
    assert.equal(started.level, "info", started.message);
    url = /^Live page: (http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{16,64}\/)\n/.exec(started.message)?.[1];
    assert.ok(url, started.message);
    const page = await get(url);
    assert.equal(page.status, 200);
    assert.match(page.text, /<meta name="pi-session-live"/);
    // Pi's system prompt and tools, passed in a file removed once the watcher serves
    assert.match(cardsOf(page.text), /<details class="ac-prompt">/);
    assert.match(cardsOf(page.text), /<details class="ac-tools"><summary><b>Tools<\/b> <span class="muted">\(\d+, \d+ active\)/);
    assert.deepEqual(contextFolders(env.TMPDIR), [], "the context folder is removed once the page is served");
    const before = JSON.parse((await get(`${url}version`)).text).version;
    appendPrompt(session, "live-0001", "typed while the live page was open");
    await until("a new version", async () => JSON.parse((await get(`${url}version`)).text).version !== before);
    const grown = (await get(url)).text;
    assert.match(grown, /typed while the live page was open/);
    assert.match(cardsOf(grown), /<details class="ac-prompt">/, "a later version has the cards too");

    const [again] = await pi.command("/live-html");
    assert.equal(again.message, `Live page: ${url} (already running; /live-html stop ends it)`);
  });

  test("options with values are passed on, and the page keeps its address", async () => {
    const [dark] = await pi.command("/live-html --theme dark --no-embed");
    assert.equal(dark.level, "info", dark.message);
    assert.ok(dark.message.startsWith(`Live page: ${url}\n`), dark.message);
    const page = (await get(url)).text;
    assert.match(page, /<html lang="en" data-theme="dark">/);
    assert.doesNotMatch(page, /id="session-jsonl"/);
    assert.match(cardsOf(page), /<details class="ac-prompt">/, "a restarted watcher is given the context again");
    const secret = new URL(url).pathname;
    assert.equal((await get(new URL("/", url).href)).status, 404, "no page without the secret");
    assert.equal((await get(`${url.replace(secret, "/wrong-secret-0123456789/")}`)).status, 404);
  });

  test("a mistyped option is one error line, and the running page goes on", async () => {
    const [failed] = await pi.command("/live-html --no-such-option");
    assert.equal(failed.level, "error");
    assert.match(failed.message, /^\/live-html failed: no such option '--no-such-option'/);
    assert.match(failed.message, /the live page goes on/);
    assert.equal((await until("the page again", async () => (await get(url)).status === 200)), true);
    assert.match(cardsOf((await get(url)).text), /<details class="ac-prompt">/, "the page started again has them");
    assert.deepEqual(contextFolders(env.TMPDIR), [], "nor a failed start's nor the restart's folder is left");
    const [word] = await pi.command("/live-html page.html");
    assert.match(word.message, /takes watch options \(or stop\), not "page.html"/);
  });

  test("/new: the page moves to the new session once Pi has written it, on the same address", async () => {
    const response = await pi.request({ type: "new_session" });
    assert.equal(response.success, true);
    const state = await pi.request({ type: "get_state" });
    const fresh = state.data.sessionFile;
    assert.ok(fresh && fresh !== session && !existsSync(fresh), JSON.stringify(state.data));
    assert.match((await get(url)).text, /typed while the live page was open/); // the old one meanwhile
    // Pi writes a new session's file at its first reply; these tests call no model, so do it here
    writeFileSync(fresh, `${JSON.stringify({ type: "session", version: 3, id: "fresh-live", timestamp: new Date().toISOString(), cwd: project })}\n`);
    appendPrompt(fresh, "fresh-0001", "the first prompt of the new session");
    await until("the new session's page", async () => /the first prompt of the new session/.test((await get(url)).text));
    assert.match(cardsOf((await get(url)).text), /<details class="ac-prompt">/, "the moved page has the cards");
    assert.deepEqual(contextFolders(env.TMPDIR), []);
    // /resume: the file is there, so the page moves at once
    const back = await pi.request({ type: "switch_session", sessionPath: session });
    assert.equal(back.success, true, JSON.stringify(back));
    await until("the resumed session's page", async () => /typed while the live page was open/.test((await get(url)).text));
  });

  test("--open opens the page once: moving to another session or a mistyped option opens no more tabs", async () => {
    const log = join(tmp, "opened.log");
    const opened = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []);
    const [started] = await pi.command("/live-html --open");
    assert.equal(started.level, "info", started.message);
    await until("the browser opened", async () => opened().length === 1);
    // a redirect file only this user can read, not the address: its secret is on no command line
    const [given] = opened();
    assert.match(given, /^file:\/\/.*\/open\.html$/);
    assert.ok(!given.includes(new URL(url).pathname.split("/")[1]), "the secret is not on the command line");
    assert.ok(readFileSync(fileURLToPath(given), "utf8").includes(`content="0;url=${url}"`));
    // /resume of another session: the open tab follows it on the same address
    const other = join(tmp, "other-session.jsonl");
    cpSync(session, other);
    appendPrompt(other, "other-0001", "a prompt of the other session");
    assert.equal((await pi.request({ type: "switch_session", sessionPath: other })).success, true);
    await until("the other session's page", async () => /a prompt of the other session/.test((await get(url)).text));
    const [failed] = await pi.command("/live-html --no-such-option");
    assert.equal(failed.level, "error", failed.message);
    await until("the page again", async () => (await get(url)).status === 200);
    await new Promise((done) => setTimeout(done, 1_500)); // a browser it would open comes at start
    assert.deepEqual(opened(), [given], "one tab, however often the watcher starts again");
    assert.equal((await pi.request({ type: "switch_session", sessionPath: session })).success, true);
    await until("back on the first session", async () => /typed while the live page was open/.test((await get(url)).text));
  });

  test("/live-html stop while the page moves to a new session stops it for good", async () => {
    assert.equal((await get(url)).status, 200);
    assert.equal((await pi.request({ type: "new_session" })).success, true);
    const fresh = (await pi.request({ type: "get_state" })).data.sessionFile;
    writeFileSync(fresh, `${JSON.stringify({ type: "session", version: 3, id: "fresh-live-2", timestamp: new Date().toISOString(), cwd: project })}\n`);
    appendPrompt(fresh, "fresh-0002", "a second new session");
    await new Promise((r) => setTimeout(r, 1_100)); // the move is under way about now
    const [stopped] = await pi.command("/live-html stop");
    assert.match(stopped.message, /^(Stopped the live page|No live page is running)/);
    await new Promise((r) => setTimeout(r, 3_000));
    assert.equal(await refused(url), true, "a watcher started by the move is serving");
    const back = await pi.request({ type: "switch_session", sessionPath: session });
    assert.equal(back.success, true);
  });

  test("/live-html stop ends it; quitting Pi ends a running one", async () => {
    const [none] = await pi.command("/live-html stop");
    assert.equal(none.message, "No live page is running.");

    const [started] = await pi.command("/live-html");
    const second = /^Live page: (\S+)/.exec(started.message)?.[1];
    assert.equal(second, url, "started again, the page is where it was");
    assert.equal((await get(second)).status, 200);
    await pi.close();
    pi = undefined;
    await until("the server gone with Pi", () => refused(second), 10_000);
  });
});

describe("Pi package: /live-html with a stand-in for Pi's API", suiteOptions, () => {
  let tmp;
  let project;
  let session;
  let leaf;
  let wrapper; // pi-session, behind a script that records its arguments and the context it got
  const binBefore = process.env.PI_SESSION_BIN;
  const tmpBefore = process.env.TMPDIR;

  before(() => {
    if (found.missing) throw new Error(`${found.missing} (CI is set, so this is an error)`);
    ({ tmp, project, session } = makeProject("pi-live-context-"));
    leaf = describeSession(session).lastLeaf;
    wrapper = join(tmp, "pi-session");
    writeFileSync(
      wrapper,
      [
        "#!/bin/sh",
        `here=${JSON.stringify(tmp)}`,
        'printf "%s\\n" "$@" > "$here/argv.txt"',
        'rm -f "$here/seen.json"; prev=""',
        'for a in "$@"; do [ "$prev" = "--agent-context" ] && cp "$a" "$here/seen.json"; prev="$a"; done',
        `exec ${JSON.stringify(found.piSession)} "$@"`,
        "",
      ].join("\n"),
      { mode: 0o755 },
    );
    process.env.PI_SESSION_BIN = wrapper;
    process.env.TMPDIR = join(tmp, "tmp"); // where the extension makes its context folders
  });

  after(async () => {
    if (binBefore === undefined) delete process.env.PI_SESSION_BIN;
    else process.env.PI_SESSION_BIN = binBefore;
    if (tmpBefore === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpBefore;
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  const argv = () => readFileSync(join(tmp, "argv.txt"), "utf8").split("\n").slice(0, -1);
  const tools = [{ name: "bash", description: "Run a command", parameters: { type: "object", properties: {} } }];

  test("the context file is passed to the watcher and removed once it serves", async () => {
    const { commands } = await loadWithFakePi(found.piCli, {
      api: { getAllTools: () => tools, getActiveTools: () => ["bash"] },
    });
    const prompt = "You are the live test's agent.\nSecond line.";
    const { ctx, notes } = fakeCtx(project, session, leaf, { getSystemPrompt: () => prompt });
    try {
      await commands["live-html"].handler("--theme dark", ctx);
      assert.equal(notes.length, 1, JSON.stringify(notes));
      assert.equal(notes[0].level, "info", notes[0].message);
      const url = /^Live page: (\S+)/.exec(notes[0].message)?.[1];
      const args = argv();
      const at = args.indexOf("--agent-context");
      assert.deepEqual(args.slice(0, 5), ["watch", session, "--port", args[3], "--until-stdin-closes"]);
      assert.equal(at, 5, "before the options typed, which win");
      assert.deepEqual(args.slice(7), ["--theme", "dark"]);
      assert.deepEqual(JSON.parse(readFileSync(join(tmp, "seen.json"), "utf8")), {
        systemPrompt: prompt,
        tools,
        activeTools: ["bash"],
      });
      assert.ok(!existsSync(dirname(args[at + 1])), "the context folder is removed once the watcher serves");
      assert.deepEqual(contextFolders(join(tmp, "tmp")), []);
      const page = (await get(url)).text;
      assert.match(cardsOf(page), /You are the live test&#39;s agent\./);
      assert.match(cardsOf(page), /<b>Tools<\/b> <span class="muted">\(1, 1 active\)/);

      // a start that fails (the running page is started again): no folder left behind
      const failed = fakeCtx(project, session, leaf, { getSystemPrompt: () => prompt });
      await commands["live-html"].handler("--no-such-option", failed.ctx);
      assert.equal(failed.notes[0].level, "error");
      assert.match(failed.notes[0].message, /no such option '--no-such-option'.*goes on as it was/s);
      assert.ok(argv().includes("--agent-context"), "the restarted watcher is given it again");
      assert.deepEqual(contextFolders(join(tmp, "tmp")), []);
      assert.match(cardsOf((await get(url)).text), /You are the live test&#39;s agent\./);
    } finally {
      await commands["live-html"].handler("stop", ctx);
    }
  });

  test("a Pi without the calls starts the watcher as before, without cards", async () => {
    const { commands } = await loadWithFakePi(found.piCli, {});
    const { ctx, notes } = fakeCtx(project, session, leaf);
    try {
      await commands["live-html"].handler("", ctx);
      assert.equal(notes[0].level, "info", notes[0].message);
      assert.ok(!argv().includes("--agent-context"));
      const url = /^Live page: (\S+)/.exec(notes[0].message)?.[1];
      const page = (await get(url)).text;
      assert.match(page, /<meta name="pi-session-live"/);
      assert.equal(cardsOf(page), "");
    } finally {
      await commands["live-html"].handler("stop", ctx);
    }
    assert.deepEqual(contextFolders(join(tmp, "tmp")), []);
  });
});
