// The Pi package after the s64 hunt: /live-html says what its watcher says later (a token written
// to the session while the page runs) and when the watcher dies on its own; no error or note
// repeats a word the user typed, whatever the CLI's wording; a file name with a line break is
// refused before anything is written.
//
//   PI_SESSION_BIN="$PWD/.venv/bin/pi-session" node --test tests/node/extension_s64.test.mjs
//
// The extension is loaded the way Pi loads it (Pi's own jiti) with a stand-in for Pi's API whose
// exec runs the real pi-session; /live-html runs the real watcher, read over HTTP on 127.0.0.1.
// Inputs as in extension.test.mjs: PI_HOME, PI_SESSION_BIN, PI_SHARED_DIR; a missing one skips
// locally and fails under CI.
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { fakeCtx, isExecutable, loadWithFakePi, projectWithSession, whatIsMissing, withEnv } from "./fake_pi.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SHARED = process.env.PI_SHARED_DIR || resolve(REPO, "..", "shared");
const FIXTURE = join(SHARED, "fixtures", "pi-branched-1.jsonl");
const PI_CLI = process.env.PI_HOME && join(process.env.PI_HOME, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
// a GitHub token's shape (ghp_ and 36 more): what the CLI's credential check knows
const TOKEN = "ghp_S64liveS64liveS64liveS64liveS64live12";
const TYPED = "(what you typed)";
const LIVE_KEY = Symbol.for("pi-session-export/live-html"); // where the extension keeps its watcher

const PI_SESSION = [process.env.PI_SESSION_BIN, join(REPO, ".venv", "bin", "pi-session")].find((c) => c && isExecutable(c));
const missing = whatIsMissing(FIXTURE, PI_CLI, PI_SESSION);
const suiteOptions = missing && !process.env.CI ? { skip: missing } : {};

async function until(what, check, ms = 30_000) {
  const end = Date.now() + ms;
  for (;;) {
    const result = await check();
    if (result) return result;
    if (Date.now() > end) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A line as Pi appends it: a prompt under the file's last entry. */
function appendPrompt(file, id, text) {
  const last = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l)).at(-1);
  const line = {
    type: "message",
    id,
    parentId: last.id,
    timestamp: new Date().toISOString(),
    message: { role: "user", content: text, timestamp: Date.now() },
  };
  writeFileSync(file, `${readFileSync(file, "utf8")}${JSON.stringify(line)}\n`);
}

describe("Pi package: what the live page's watcher says later, and what no message repeats (s64)", suiteOptions, () => {
  let tmp;
  let project;
  let session;
  let leaf;
  let env;
  let commands;
  let handlers;
  let envChanges;

  before(async () => {
    if (missing) throw new Error(`${missing} (CI is set, so this is an error)`);
    ({ tmp, project, session, leaf, env } = projectWithSession("pi-ext-s64-", FIXTURE));
    // the watcher runs with this process's environment (the extension spawns it itself)
    envChanges = { ...env, PI_SESSION_BIN: PI_SESSION, TMPDIR: join(tmp, "tmp"), GH_TOKEN: undefined, GITHUB_TOKEN: undefined };
    // a tool, so that the extension passes its own --agent-context first (the stand-in records
    // the first one's file) and a typed one comes after it
    const api = { getAllTools: () => [{ name: "bash", description: "Run a command", parameters: { type: "object" } }] };
    ({ commands, handlers } = await loadWithFakePi(PI_CLI, { env, api }));
  });

  after(async () => {
    const state = globalThis[LIVE_KEY];
    for (const child of [state?.watch?.child, state?.starting]) child?.kill("SIGKILL");
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  /** One context for a whole test: every notification, now or later, lands in `notes`. */
  const session64 = () => {
    const { ctx, notes } = fakeCtx(project, session, leaf);
    const run = (name, args) => withEnv(envChanges, () => commands[name].handler(args, ctx));
    return { ctx, notes, run };
  };

  test("a token written to the session while the live page runs is said at once, without its value", async () => {
    const { notes, run } = session64();
    await run("live-html", "");
    assert.equal(notes.length, 1, JSON.stringify(notes));
    assert.equal(notes[0].level, "info", notes[0].message); // the fixture holds no credential
    const url = /^Live page: (\S+)/.exec(notes[0].message)[1];
    try {
      appendPrompt(session, "s64tok01", `here is my key ${TOKEN}`);
      const warned = await until("a warning about the credential", () => notes.slice(1).find((n) => /credential/.test(n.message)));
      assert.equal(warned.level, "warning");
      assert.match(warned.message, new RegExp(`^Live page ${url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:\\n`));
      assert.match(warned.message, /warning: the page holds 1 credential of a known format in clear \(.*\); \/live-html --redact serves it redacted/);
      assert.ok(!warned.message.includes(TOKEN), warned.message);
      assert.ok(!notes.some((n) => /\/live-html stopped/.test(n.message)), JSON.stringify(notes));
    } finally {
      await run("live-html", "stop");
    }
    // the stop is the extension's own: no "stopped" news after it
    assert.equal(notes.at(-1).message, `Stopped the live page ${url}`);
    assert.ok(!notes.some((n) => /\/live-html stopped/.test(n.message)), JSON.stringify(notes));
  });

  test("a watcher killed from outside is said (run /live-html again), a stop, a restart or quitting is not", async () => {
    const { notes, run } = session64();
    await run("live-html", "");
    const url = /^Live page: (\S+)/.exec(notes.at(-1).message)[1];
    // started again with other options: the old watcher ends, as asked
    await run("live-html", "--theme dark");
    assert.match(notes.at(-1).message, /^Live page: /);
    const watcher = globalThis[LIVE_KEY].watch.child;
    process.kill(watcher.pid, "SIGKILL");
    const stopped = await until("the news that it stopped", () => notes.find((n) => /^\/live-html stopped/.test(n.message)));
    assert.deepEqual(stopped, {
      message: "/live-html stopped: pi-session watch was ended by SIGKILL; run /live-html again for a live page",
      level: "error",
    });
    assert.equal(notes.filter((n) => /^\/live-html stopped/.test(n.message)).length, 1, JSON.stringify(notes));
    // forgotten: a new /live-html starts one (on the same address), not "already running"
    await run("live-html", "");
    assert.equal(notes.at(-1).message.split("\n")[0], `Live page: ${url}`);
    assert.equal((await fetch(url)).status, 200);
    // Pi quitting stops it too, and says nothing
    const before = notes.length;
    await handlers.session_shutdown({ reason: "quit" }, fakeCtx(project, session, leaf).ctx);
    assert.equal(globalThis[LIVE_KEY].watch, undefined);
    await new Promise((r) => setTimeout(r, 1_500)); // (a "stopped" note would come within 1 s)
    assert.deepEqual(notes.slice(before), []);
  });

  test("no error or note repeats a word typed (it may be a token), whatever the CLI's wording", async () => {
    const { notes, run } = session64();
    const cases = [
      ["share-html", `--delete ${TOKEN} --api-url http://127.0.0.1:9`, /--delete needs a gist id or gist URL/],
      ["export-html", `p.html --leaf ${TOKEN}`, /no entry with id/],
      ["export-html", `--exclude=${TOKEN}`, /--exclude: no entry/],
      ["export-html", `--report ${TOKEN}/r.json`, /--report: the folder/],
      ["live-html", TOKEN, /takes watch options \(or stop\), not a word like that/],
    ];
    for (const [name, args, expected] of cases) {
      const before = notes.length;
      await run(name, args);
      const said = notes.slice(before);
      assert.equal(said.length, 1, `${name} ${args}: ${JSON.stringify(said)}`);
      assert.equal(said[0].level, "error", said[0].message);
      assert.match(said[0].message, expected);
      assert.ok(!said[0].message.includes(TOKEN), said[0].message);
      assert.ok(said[0].message.includes(TYPED), said[0].message);
    }
    // a note on a success: the path asked for is shown, the value that came with it is not
    const before = notes.length;
    await run("export-html", `ctx.html --agent-context ${TOKEN}`);
    const [exported] = notes.slice(before);
    assert.equal(exported.level, "warning", exported.message);
    assert.equal(exported.message.split("\n")[0], `Exported to ${join(project, "ctx.html")}`);
    assert.match(exported.message, /warning: --agent-context \(what you typed\): no such file/);
    assert.ok(!exported.message.includes(TOKEN), exported.message);
  });

  test("the CLI's own words and the paths asked for stay whole around what was typed", async () => {
    // review, stop 64: a typed value was replaced inside other words ("/export-(what you
    // typed)" for `--format html`), and the report's path the user asked for was hidden
    const { notes, run } = session64();
    mkdirSync(join(project, "out"), { recursive: true });
    let before = notes.length;
    await run("export-html", "--format html p4.html");
    let [said] = notes.slice(before);
    assert.match(said.message, /the output path comes first: \/export-html \[path\]/, said.message);
    assert.ok(!said.message.includes(TYPED), said.message);
    before = notes.length;
    await run("export-html", "p5.html --report out/r.json");
    [said] = notes.slice(before);
    assert.match(said.message, /report written to out\/r\.json/, said.message);
    assert.ok(!said.message.includes(TYPED), said.message);
  });

  test("a file name with a line break is refused before anything is written", async () => {
    const { notes, run } = session64();
    for (const args of ["'odd\nname.html'", "-o 'odd\nname.html'", "--output='odd\rname.md'"]) {
      const before = notes.length;
      await run("export-html", args);
      assert.deepEqual(notes.slice(before), [
        { message: "/export-html failed: the file name has a line break: give a name without one", level: "error" },
      ], args);
    }
    assert.deepEqual(readdirSync(project).filter((name) => name.startsWith("odd")), []);
  });
});
