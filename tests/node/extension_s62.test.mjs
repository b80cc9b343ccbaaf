// The Pi package's answers to what a user may type (second review, s62): the install hint, a
// stray word that may be a token, options that choose another session, /live-html without a UI
// or before a new session is saved, and PI_SESSION_BIN given as a bare command or with ~/.
//
//   PI_SESSION_BIN="$PWD/.venv/bin/pi-session" node --test tests/node/extension_s62.test.mjs
//
// The extension is loaded the way Pi loads it (Pi's own jiti) with a stand-in for Pi's API whose
// exec runs the real pi-session; one test runs the real `pi -p`. Inputs as in extension.test.mjs:
// PI_HOME, PI_SESSION_BIN, PI_SHARED_DIR; a missing one skips locally and fails under CI.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { fakeCtx, isExecutable, loadWithFakePi, projectWithSession, whatIsMissing, withEnv } from "./fake_pi.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SHARED = process.env.PI_SHARED_DIR || resolve(REPO, "..", "shared");
const FIXTURE = join(SHARED, "fixtures", "pi-branched-1.jsonl");
const EXTENSION_DIR = join(REPO, "exporter", "pi_extension");
const PI_CLI = process.env.PI_HOME && join(process.env.PI_HOME, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
const TOKEN = "ghp_S62secretS62secretS62secretS62secret1";

const PI_SESSION = [process.env.PI_SESSION_BIN, join(REPO, ".venv", "bin", "pi-session")].find((c) => c && isExecutable(c));
const missing = whatIsMissing(FIXTURE, PI_CLI, PI_SESSION);
const suiteOptions = missing && !process.env.CI ? { skip: missing } : {};

describe("Pi package: what a user may type (s62)", suiteOptions, () => {
  let tmp;
  let project;
  let session;
  let leaf;
  let env;
  let commands;
  let handlers;

  before(async () => {
    if (missing) throw new Error(`${missing} (CI is set, so this is an error)`);
    ({ tmp, project, session, leaf, env } = projectWithSession("pi-ext-s62-", FIXTURE));
    ({ commands, handlers } = await loadWithFakePi(PI_CLI, { env }));
  });

  after(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  const run = async (name, args, extra) => {
    const { ctx, notes } = fakeCtx(project, session, leaf, extra);
    await withEnv({ PI_SESSION_BIN: PI_SESSION, TMPDIR: join(tmp, "tmp") }, () => commands[name].handler(args, ctx));
    assert.equal(notes.length, 1, JSON.stringify(notes));
    return notes[0];
  };

  test("the not-installed hint says to install from a clone: the project is not on PyPI", async () => {
    const emptyBin = join(tmp, "empty-bin");
    mkdirSync(emptyBin, { recursive: true });
    const { ctx, notes } = fakeCtx(project, session, leaf);
    await withEnv({ PI_SESSION_BIN: undefined, PATH: emptyBin }, () => commands["export-html"].handler("", ctx));
    assert.equal(notes.length, 1, JSON.stringify(notes));
    assert.equal(notes[0].level, "error");
    assert.match(notes[0].message, /pi-session is not installed/);
    assert.match(notes[0].message, /`pip install <clone folder>`/);
    assert.match(notes[0].message, /not on PyPI/);
    const described = JSON.parse(readFileSync(join(EXTENSION_DIR, "package.json"), "utf8")).description;
    assert.doesNotMatch(described, /\(pip install pi-session-export\)/);
    assert.match(described, /clone/);
  });

  test("a stray word or a bad value is not shown back: it may be a token", async () => {
    const stray = await run("share-html", `--api-url http://127.0.0.1:9 ${TOKEN}`);
    assert.equal(stray.level, "error");
    assert.ok(!stray.message.includes(TOKEN), stray.message);
    assert.match(stray.message, /^\/share-html failed: got an unexpected extra word \(not shown: it may be a token\)( \(see: pi-session share --help\))?$/);

    const value = await run("export-html", `--theme ${TOKEN}`);
    assert.equal(value.level, "error");
    assert.ok(!value.message.includes(TOKEN), value.message);
    assert.match(value.message, /invalid value for '--theme': '…' is not one of .*not shown: it may be a token/);

    const valueWithEquals = await run("export-html", `--format=${TOKEN}`);
    assert.ok(!valueWithEquals.message.includes(TOKEN), valueWithEquals.message);

    // an empty quoted word is no path: the default name, not "unexpected extra argument ()"
    const empty = await run("export-html", "''");
    assert.deepEqual(empty, { message: `Exported to ${join(project, "pi-session-session.html")}`, level: "info" });
  });

  test("options that choose another session are refused; the output path comes first", async () => {
    for (const option of ["--all", "--pick", "--demo", "--cwd /tmp", "--sessions-dir=/tmp"]) {
      const said = await run("export-html", option);
      assert.equal(said.level, "error", option);
      assert.match(said.message, /^\/export-html failed: \/export-html exports this session: --all, --pick, --demo, --cwd.* do not apply inside Pi/, option);
      assert.doesNotMatch(said.message, /SESSION/, option);
    }
    const shared = await run("share-html", "--pick");
    assert.match(shared.message, /^\/share-html failed: \/share-html shares this session: --pick.* do not apply inside Pi/);
    const live = await run("live-html", "--demo");
    assert.match(live.message, /^\/live-html failed: \/live-html watches this session: --pick, --demo.* do not apply inside Pi/);

    const late = await run("export-html", "--theme dark page2.html");
    assert.equal(late.level, "error");
    assert.match(late.message, /the output path comes first: \/export-html \[path\] \[options\]/);
    assert.ok(!existsSync(join(project, "page2.html")));
  });

  test("PI_SESSION_BIN may be a bare command on PATH, or start with ~/", async () => {
    const bin = join(tmp, "bin");
    mkdirSync(bin, { recursive: true });
    symlinkSync(PI_SESSION, join(bin, "pi-session-s62"));
    for (const [given, changes] of [
      ["pi-session-s62", { PATH: `${bin}:${process.env.PATH}` }],
      ["~/bin/pi-session-s62", { HOME: tmp }],
    ]) {
      const target = join(tmp, `bin-${given.length}.html`);
      const { ctx, notes } = fakeCtx(project, session, leaf);
      await withEnv({ ...changes, PI_SESSION_BIN: given, TMPDIR: join(tmp, "tmp") }, () =>
        commands["export-html"].handler(target, ctx),
      );
      assert.deepEqual(notes, [{ message: `Exported to ${target}`, level: "info" }], given);
    }
  });

  test("after /new, /live-html with the watcher running gives its address, not an error", async () => {
    const live = await run("live-html", "");
    assert.equal(live.level, "info", live.message);
    const url = /^Live page: (\S+)/.exec(live.message)[1];
    try {
      // /new: Pi ends this session and starts one whose file appears at its first reply
      const fresh = join(project, "fresh.jsonl");
      const newCtx = fakeCtx(project, fresh, null);
      await handlers.session_shutdown({ reason: "new" }, newCtx.ctx);
      await withEnv({ PI_SESSION_BIN: PI_SESSION }, () => handlers.session_start({ reason: "new" }, newCtx.ctx));
      const again = fakeCtx(project, fresh, null);
      await withEnv({ PI_SESSION_BIN: PI_SESSION }, () => commands["live-html"].handler("", again.ctx));
      assert.deepEqual(again.notes, [{
        message: `Live page: ${url} (still showing the previous session; it moves to this one at its first reply)`,
        level: "info",
      }]);
      assert.equal((await fetch(url)).status, 200, "the page still serves");
    } finally {
      await run("live-html", "stop");
    }
  });
});

describe("Pi package: /live-html in print mode (real pi -p)", suiteOptions, () => {
  test("pi -p /live-html says the live page needs an interactive Pi, and gives no address", () => {
    if (missing) throw new Error(`${missing} (CI is set, so this is an error)`);
    const tmp = mkdtempSync(join(tmpdir(), "pi-ext-s62-print-"));
    try {
      const home = join(tmp, "home");
      const project = join(tmp, "project");
      for (const dir of [home, project, join(tmp, "tmp")]) mkdirSync(dir, { recursive: true });
      const session = join(project, "session.jsonl");
      const [header, ...rest] = readFileSync(FIXTURE, "utf8").split("\n");
      writeFileSync(session, [JSON.stringify({ ...JSON.parse(header), cwd: project }), ...rest].join("\n"));
      const env = {
        PATH: process.env.PATH,
        HOME: home,
        TMPDIR: join(tmp, "tmp"),
        PI_OFFLINE: "1",
        PI_TELEMETRY: "0",
        PI_SESSION_BIN: PI_SESSION,
        PYTHONDONTWRITEBYTECODE: "1",
      };
      const done = spawnSync(process.execPath, [PI_CLI, "-e", EXTENSION_DIR, "--session", session, "-p", "/live-html"], {
        cwd: project,
        env,
        encoding: "utf8",
        timeout: 120_000,
      });
      const output = `${done.stdout}\n${done.stderr}`;
      assert.doesNotMatch(output, /Live page: http/, output);
      assert.match(output, /\/live-html failed: the live page needs an interactive Pi/, output);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
