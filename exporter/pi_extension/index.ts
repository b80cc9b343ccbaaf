/**
 * pi-session-export inside Pi: `/export-html [path] [options]` and `/share-html [options]`.
 *
 * Both commands run our Python CLI (`pi-session export|share`) on the session file Pi has open
 * and pass Pi's *current* leaf with `--leaf`, so the page's main transcript is the branch the user
 * is on right now (after `/tree` the in-memory leaf is often not the last entry of the file, and
 * `pi --export` always shows the file's last leaf); `/share-html --delete GIST` passes neither.
 * Results and failures come back as one `ctx.ui.notify` each; nothing here throws into Pi.
 * Both also pass what Pi keeps only in memory, the system prompt and the tools (all of them,
 * and which are active), as `--agent-context FILE`: a JSON file in a private temp folder,
 * removed once the CLI is done; a Pi without those calls exports without it.
 *
 * `/live-html [stop] [watch options]` starts `pi-session watch` on the session file: a page on
 * 127.0.0.1, made again as the session grows. The watcher is a child process that outlives this
 * extension instance (Pi reloads extensions on /new, /resume and /fork): it is kept on
 * `globalThis`, moved to the new session's file (on the same port, so the open page follows)
 * once Pi has written it, and stopped when Pi quits. Each start passes a fresh
 * `--agent-context FILE` (the session's own prompt and tools, after /new or /resume too): the
 * watcher reads it once, so the folder is removed as soon as it serves, or fails to start.
 *
 * The CLI is PI_SESSION_BIN, else the `pi-session` installed next to this package (same wheel),
 * else `pi-session` on PATH. Default options can be set in PI_SESSION_EXPORT_ARGS and
 * PI_SESSION_SHARE_ARGS; options typed after the command come later and so win.
 *
 * Pi loads this file through the `pi.extensions` key of the package.json next to it (jiti compiles
 * the TypeScript on the fly: no build step, and no dependencies beyond Node's standard library).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type {
  ExecResult,
  ExtensionAPI,
  ExtensionCommandContext,
  ExtensionContext,
} from "@mariozechner/pi-coding-agent";

const CLI_NAME = "pi-session";
// pi-session-export is not on PyPI: it installs from a clone of its repository.
const INSTALL_HINT =
  "Install it from a clone of pi-session-export with `pip install <clone folder>` (or " +
  "`pipx install <clone folder>`; a bare `pip install pi-session-export` finds nothing, it is not on PyPI), " +
  "or set PI_SESSION_BIN to the pi-session executable.";
// Rendering a large session takes seconds; sharing may retry a slow network a few times.
const EXPORT_TIMEOUT_MS = 120_000;
// the CLI's own worst case: a read (3 x 30 s), an upload of a big page (3 x 120 s), backoff and
// a rate-limit wait of up to 60 s
const SHARE_TIMEOUT_MS = 600_000;
const STATUS_KEY = "pi-session-export";
// Export warnings can run to 20 lines; a notification should stay readable.
const MAX_NOTES = 5;
const extensionDir = dirname(fileURLToPath(import.meta.url));

type Level = "info" | "warning" | "error";

/** An expected failure (bad input, missing CLI): its message is the whole notification. */
class UserError extends Error {}

/**
 * Split a command line into words: whitespace separates, '...' and "..." group (inside double
 * quotes \" and \\ are escapes). Outside quotes a backslash escapes a space, tab or quote
 * (`my\ page.html`); before anything else it stays literal so Windows paths work.
 * Errors never repeat the text: it may hold a --token or --secret value.
 */
function splitArgs(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | null = null;
  let quoteAt = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === quote) quote = null;
      else if (quote === '"' && ch === "\\" && (text[i + 1] === '"' || text[i + 1] === "\\")) word += text[++i];
      else word += ch;
    } else if (ch === "\\" && /^[ \t'"]$/.test(text[i + 1] ?? "")) {
      word += text[++i];
      inWord = true;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      quoteAt = i + 1;
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (quote) throw new UserError(`unterminated ${quote} quote (opened at character ${quoteAt})`);
  if (inWord) words.push(word);
  return words;
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The `pi-session` this extension was installed with: the package lives in
 * `<prefix>/lib/pythonX.Y/site-packages/exporter/pi_extension` (POSIX) or
 * `<prefix>\Lib\site-packages\exporter\pi_extension` (Windows), and the console script in
 * `<prefix>/bin` or `<prefix>\Scripts`. Preferring it keeps extension and CLI versions in step
 * and works when that virtualenv is not on PATH. Editable installs have no such layout.
 */
function bundledCli(packageDir: string): string | undefined {
  const sitePackages = dirname(dirname(packageDir));
  if (!["site-packages", "dist-packages"].includes(basename(sitePackages))) return undefined;
  const cli =
    process.platform === "win32"
      ? resolve(sitePackages, "..", "..", "Scripts", `${CLI_NAME}.exe`)
      : resolve(sitePackages, "..", "..", "..", "bin", CLI_NAME);
  return isExecutableFile(cli) ? cli : undefined;
}

/** The executable `command` (default pi-session) in the first PATH folder that has it. */
function cliOnPath(env: NodeJS.ProcessEnv, command: string): string | undefined {
  const names =
    process.platform === "win32"
      ? [command, ...(env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").map((ext) => command + ext.toLowerCase())]
      : [command];
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    for (const name of names) {
      const candidate = join(dir, name);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

/** PI_SESSION_BIN as a shell would take it: a bare name (no slash) is looked up on PATH, and a
 * leading `~/` is the home folder (no shell reads the variable before us). */
function resolveOverride(override: string, env: NodeJS.ProcessEnv): string | undefined {
  const isBareName = !/[\\/]/.test(override) && override !== "~";
  if (isBareName) return cliOnPath(env, override);
  const path = expandHome(override);
  return isExecutableFile(path) ? path : undefined;
}

/** PI_SESSION_BIN, else the CLI installed alongside this package, else `pi-session` on PATH. */
function findCli(env: NodeJS.ProcessEnv, packageDir: string): string {
  const override = env.PI_SESSION_BIN?.trim();
  if (override) {
    const resolved = resolveOverride(override, env);
    if (resolved) return resolved;
    throw new UserError(
      `PI_SESSION_BIN is set to ${override}, which is not an executable file (nor a command on PATH).`,
    );
  }
  const found = bundledCli(packageDir) ?? cliOnPath(env, CLI_NAME);
  if (!found) throw new UserError(`pi-session is not installed or not on PATH. ${INSTALL_HINT}`);
  return found;
}

/** The session file and current leaf as Pi has them in memory right now. */
function currentSession(ctx: ExtensionCommandContext): { file: string; leaf: string } {
  const file = ctx.sessionManager.getSessionFile();
  if (!file) throw new UserError("This session is not saved to a file (pi --no-session), so there is nothing to export.");
  // Pi writes a new session file only once the first assistant reply arrives.
  if (!existsSync(file)) throw new UserError("Pi has not saved this session yet; try again after the first reply.");
  const leaf = ctx.sessionManager.getLeafId();
  if (!leaf) throw new UserError("The current branch is empty (you are before the first message); nothing to export.");
  return { file, leaf };
}

const withoutPrefix = (line: string) => line.replace(/^pi-session:\s*/, "");

function lines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
}

/** The CLI's lines that name files, as written: a name may end (or start) with a space. */
function pathLines(text: string): string[] {
  return text.split(/\r?\n/).filter((l) => l.trim() !== "");
}

const NOT_SHOWN = "(not shown: it may be a token)";

/** The values among the words given (`--token X`'s X, `--token=X`'s X, a stray word): what a
 * click error may quote back. Option names are kept, so "no such option '--x'" still helps. */
function givenValues(words: string[]): string[] {
  const values = words.flatMap((word) => {
    if (!word.startsWith("-")) return [word];
    const at = word.indexOf("=");
    return at > 0 ? [word.slice(at + 1)] : [];
  });
  // longest first, so a value inside another is not replaced in pieces; 3+ characters, so a
  // short value (`-j 2`) does not blank every "2" of the message
  return values.filter((v) => v.length >= 3).sort((a, b) => b.length - a.length);
}

/** A usage error (click's, as the CLI words it) without the words it quotes back: they may hold
 * a --token or --secret value (`got unexpected extra argument (ghp_...)`, `invalid value for
 * '--port': 'ghp_...'`). Other errors (a file not found, a network failure) pass as they are. */
function withoutGivenWords(line: string, words: string[], what: RunSpec["what"] | "watch"): string {
  const extra = /^got unexpected extra arguments? \(.*?\)( \(see: [^()]*\))?$/i.exec(line);
  if (extra) {
    const hint = what === "export" ? "; the output path comes first: /export-html [path] [options]" : "";
    return `got an unexpected extra word ${NOT_SHOWN}${hint}${extra[1] ?? ""}`;
  }
  if (!/^invalid value for /i.test(line)) return line;
  let cleaned = line;
  for (const value of givenValues(words)) cleaned = cleaned.split(value).join("…");
  return cleaned === line ? line : `${cleaned} (the value given is ${NOT_SHOWN.slice(1)}`;
}

/** What stands in a message for a word the user gave. */
const TYPED = "(what you typed)";

/** Every value among the words given, the way a message could quote it: a word, `--opt=X`'s X,
 * `-oX`'s X, and a path's folders (`--report X/r.json`: "the folder X does not exist"), but not
 * a top folder such as /tmp. Option names are kept ("no such option '--x'" still helps), and so
 * are values of under 3 characters and numbers of up to 5 digits (`-j 2`, `--port 8765`: no
 * token is that, and blanking every "2" would garble the message). */
function typedValues(words: string[]): string[] {
  const values = words.flatMap((word) => {
    if (!word.startsWith("-")) return [word];
    const at = word.indexOf("=");
    if (at > 0) return [word.slice(at + 1)];
    return word.startsWith("--") ? [] : [word.slice(2)];
  });
  const isTopFolder = (folder: string) => /^(~|[A-Za-z]:)?[\\/][^\\/]*$/.test(folder); // /tmp, ~/x, C:\x
  const folders = values.flatMap((value) =>
    [...value.matchAll(/[\\/]/g)].map((separator) => value.slice(0, separator.index)).filter((f) => !isTopFolder(f)),
  );
  // a short lower-case word (`light`, `html`, `extra`, a folder `out`) is no token, and blanking
  // it blanked the CLI's own words ("as (what you typed) does"); a --secret or --token is kept
  const secret = new Set(
    words.flatMap((w, i) => {
      if (SECRET_OPTIONS.has(words[i - 1] ?? "")) return [w];
      const at = w.indexOf("=");
      return at > 0 && SECRET_OPTIONS.has(w.slice(0, at)) ? [w.slice(at + 1)] : [];
    }),
  );
  const kept = [...values, ...folders].filter(
    (v) => v.length >= 3 && !/^\d{1,5}$/.test(v) && (secret.has(v) || !/^[a-z]{3,7}$/.test(v)),
  );
  return [...new Set(kept)].sort((a, b) => b.length - a.length);
}

/** Options whose value is a secret whatever it looks like. */
const SECRET_OPTIONS = new Set(["--secret", "--token", "--redact-pattern"]);

/** `text` with every value given in `words` replaced by TYPED: an error or a note never repeats
 * what the user typed or set in PI_SESSION_*_ARGS (a --token, a --secret, a token pasted in the
 * wrong place), whatever the CLI's wording. One pass, longest value first, so a value inside
 * another is not replaced in pieces and TYPED itself is never rewritten. */
function withoutTyped(text: string, words: string[]): string {
  const values = typedValues(words);
  if (!values.length) return text;
  // only where it stands whole: "redact" (a folder typed) inside "--redact" is the CLI's word
  const alternatives = values.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
  // (a full stop after it ends the sentence: "no such file: X." still hides X)
  const pattern = new RegExp(`(?<![\\w./~\\\\-])(?:${alternatives})(?![\\w/\\\\-])`, "g");
  return text.replace(pattern, TYPED);
}

/** One line that says why the CLI failed: its own error line, click's usage error, or the tail. */
function failureReason(
  result: ExecResult,
  timeoutMs: number,
  cli: string,
  what: RunSpec["what"],
  words: string[],
): string {
  if (result.killed)
    return (
      `timed out after ${Math.round(timeoutMs / 1000)} s` +
      (what === "share" ? "; a gist may have been created or updated: run /share-html again to check" : "")
    );
  // Pi's exec gives exit code 1 and no output when the program cannot start at all (a console
  // script whose interpreter is gone, say); pi-session itself always says why it failed.
  if (!result.stdout.trim() && !result.stderr.trim())
    return `could not run ${cli} (broken installation? reinstall pi-session-export or set PI_SESSION_BIN)`;
  const said = errorLine(lines(result.stderr), words, what) ?? lines(result.stdout).at(-1);
  return withoutTyped(said ?? `exit code ${result.code}`, words);
}

/** The CLI's own error line, else click's usage error (exit 1), else the last line of `err`,
 * with the words quoted back left out (withoutGivenWords; withoutTyped does the rest). */
function errorLine(err: string[], words: string[], what: RunSpec["what"] | "watch"): string | undefined {
  const own = err.find((l) => l.startsWith("pi-session: error:"));
  if (own) return withoutGivenWords(own.slice("pi-session: error:".length).trim(), words, what);
  const usage = err.find((l) => l.startsWith("Error:"));
  if (usage) return withoutGivenWords(usage.slice("Error:".length).trim(), words, what);
  return err.at(-1);
}

/** Notify in the TUI / RPC client; print/JSON modes have no UI, so say it on stderr there. */
function report(ctx: ExtensionCommandContext, message: string, level: Level): void {
  if (ctx.hasUI) ctx.ui.notify(message, level);
  else process.stderr.write(`${message}\n`);
}

interface RunSpec {
  what: "export" | "share";
  status: string;
  timeoutMs: number;
  /** Words after `pi-session <what> SESSION --leaf LEAF`; `session: false` leaves those two out.
   * `typed`: the words as given (before a path is resolved against Pi's folder), which no error
   * or note repeats; default `words`. `shown`: values the success notes may repeat (the gist
   * `--delete` deleted: the CLI takes nothing but a gist id or URL there, and refuses the rest). */
  args: (ctx: ExtensionCommandContext) => { words: string[]; session: boolean; typed?: string[]; shown?: string[] };
  /** The success notification, from the CLI's stdout and its informational stderr lines; undefined
   * when the output lacks the result a finished run prints (the path, the link, ...). */
  success: (stdout: string, notes: string[], ctx: ExtensionCommandContext) => string | undefined;
}

/** What Pi's own interactive /export embeds and the session file lacks: the system prompt and
 * the tools (name, description, JSON-schema parameters), plus which are active. Each call is
 * optional (an older Pi lacks some) and may throw; undefined when there is nothing to pass. */
function agentContext(pi: ExtensionAPI, ctx: ExtensionContext): Record<string, unknown> | undefined {
  const attempt = <T>(call: () => T): T | undefined => {
    try {
      return call();
    } catch {
      return undefined;
    }
  };
  const api = pi as Partial<ExtensionAPI>;
  const context = ctx as Partial<ExtensionContext>;
  const prompt = typeof context.getSystemPrompt === "function" ? attempt(() => context.getSystemPrompt!()) : undefined;
  const all = typeof api.getAllTools === "function" ? attempt(() => api.getAllTools!()) : undefined;
  const active = typeof api.getActiveTools === "function" ? attempt(() => api.getActiveTools!()) : undefined;
  const tools = Array.isArray(all)
    ? all
        .filter((t) => t && typeof t.name === "string")
        .map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }))
    : undefined;
  if (typeof prompt !== "string" && !tools) return undefined;
  return {
    ...(typeof prompt === "string" ? { systemPrompt: prompt } : {}),
    ...(tools ? { tools } : {}),
    ...(Array.isArray(active) ? { activeTools: active.filter((n) => typeof n === "string") } : {}),
  };
}

/** The context written to `agent-context.json` in a new private folder (0700, the file 0600:
 * the prompt may name private paths); the folder, or undefined when there is nothing to write
 * or it cannot be written (the page is then made without it). */
function writeAgentContext(context: Record<string, unknown> | undefined): { dir: string; file: string } | undefined {
  if (!context) return undefined;
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), "pi-session-context-")); // mkdtemp makes it 0700
    const file = join(dir, "agent-context.json");
    writeFileSync(file, JSON.stringify(context), { encoding: "utf8", mode: 0o600, flag: "wx" });
    return { dir, file };
  } catch {
    if (dir) removeQuietly(dir);
    return undefined;
  }
}

function removeQuietly(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // a temp folder left behind is the OS's to clean; never an error in Pi
  }
}

async function runCli(pi: ExtensionAPI, ctx: ExtensionCommandContext, spec: RunSpec): Promise<void> {
  let typed: string[] = []; // (for the message of an unexpected error too)
  try {
    const cli = findCli(process.env, extensionDir);
    const { words, session, typed: given = words, shown = [] } = spec.args(ctx);
    typed = given;
    let argv = [spec.what, ...words];
    let written: { dir: string; file: string } | undefined;
    let result: ExecResult;
    try {
      if (session) {
        const { file, leaf } = currentSession(ctx);
        // before the options typed: a --agent-context of the user's own comes later and wins
        written = writeAgentContext(agentContext(pi, ctx));
        const context = written ? ["--agent-context", written.file] : [];
        argv = [spec.what, file, "--leaf", leaf, ...context, ...words];
      }
      if (ctx.hasUI) ctx.ui.setStatus(STATUS_KEY, spec.status);
      result = await pi.exec(cli, argv, { cwd: ctx.cwd, timeout: spec.timeoutMs });
    } finally {
      if (written) removeQuietly(written.dir);
      if (ctx.hasUI) ctx.ui.setStatus(STATUS_KEY, undefined);
    }
    if (result.code !== 0 || result.killed) {
      report(ctx, `/${spec.what}-html failed: ${failureReason(result, spec.timeoutMs, cli, spec.what, typed)}`, "error");
      return;
    }
    // The CLI's informational stderr lines (redaction summary, warnings), without the prefix.
    // A note never repeats a word given (`--agent-context X: no such file`), bar `shown`.
    // (nor the paths asked for: "report written to out/r.json" is the answer)
    const paths = [...shown, ...outputValues(typed), ...reportValues(typed)];
    const unshown = typed.filter((w) => !paths.includes(w) && !paths.some((v) => w.endsWith(`=${v}`)));
    const notes = lines(result.stderr)
      .filter((l) => l.startsWith("pi-session:"))
      .map((l) => withoutTyped(withoutPrefix(l), unshown));
    const warned = notes.some((n) => n.startsWith("warning:"));
    if (notes.length > MAX_NOTES) notes.splice(MAX_NOTES, Infinity, `… and ${notes.length - MAX_NOTES} more`);
    // Pi's exec reports a child killed by a signal (OOM killer, `kill`) as exit code 0: only the
    // result a finished run prints tells success apart.
    const message = spec.success(result.stdout, notes, ctx);
    if (message === undefined) {
      report(ctx, `/${spec.what}-html failed: pi-session ended without a result (killed?)`, "error");
      return;
    }
    report(ctx, message, warned ? "warning" : "info");
  } catch (error) {
    // Never let an exception reach Pi: it would only log it, and the user would see nothing.
    const message =
      error instanceof UserError ? error.message : `unexpected error in the pi-session extension: ${String(error)}`;
    report(ctx, `/${spec.what}-html failed: ${withoutTyped(message, typed)}`, "error");
  }
}

/** Words that would make the CLI print something other than its result (the written file's
 * path, the share link): the page on stdout (`-o -`, a lone `-`) or its help. `source` names
 * the environment variable the words came from, if any. */
function refuseNonFileOutput(words: string[], what: RunSpec["what"], source?: string): void {
  const refuse = (message: string) => new UserError(source ? `${source}: ${message}` : message);
  words.forEach((word, index) => {
    const next = words[index + 1];
    if (
      what === "export" &&
      (word === "-" || word === "-o-" || word === "--output=-" || ((word === "-o" || word === "--output") && next === "-"))
    )
      throw refuse("the page goes to a file: give a path, not - (stdout)");
    if (word === "--help" || word === "-h")
      throw refuse(`see \`pi-session ${what} --help\` in a terminal for the options`);
  });
}

/** Options that choose which session(s) the CLI reads: the commands here always give it Pi's
 * own session, so the CLI would only answer about a SESSION the user never typed. */
const SESSION_CHOOSERS: Record<RunSpec["what"] | "live", string[]> = {
  export: ["--all", "--pick", "--demo", "--cwd", "--sessions-dir", "--since", "--skip"],
  share: ["--pick", "--demo", "--sessions-dir"],
  live: ["--pick", "--demo", "--sessions-dir"],
};

/** Refuse the options of SESSION_CHOOSERS, typed or from `source` (an environment variable). */
function refuseSessionChoice(words: string[], what: RunSpec["what"] | "live", source?: string): void {
  const choosers = SESSION_CHOOSERS[what];
  const given = choosers.filter((option) => words.some((w) => w === option || w.startsWith(`${option}=`)));
  if (!given.length) return;
  const where = source ? `${source}: ` : "";
  const verb = what === "live" ? "/live-html watches" : `/${what}-html ${what}s`;
  throw new UserError(
    `${where}${verb} this session: ${choosers.join(", ")} do not apply inside Pi ` +
      `(run \`pi-session ${what === "live" ? "watch" : what}\` in a terminal for that)`,
  );
}

/** What `pi-session share --delete` accepts besides the gist: default options for sharing (say
 * `--viewer-url`) would only make it refuse, so from PI_SESSION_SHARE_ARGS just these are kept. */
function deleteOptions(words: string[]): string[] {
  const kept: string[] = [];
  words.forEach((word, index) => {
    if (word === "--dry-run" || word.startsWith("--api-url=") || word.startsWith("--token=")) kept.push(word);
    else if ((word === "--api-url" || word === "--token") && index + 1 < words.length)
      kept.push(word, words[index + 1]);
  });
  return kept;
}

/** The values of `--delete`: what "Deleted gist X" and the dry run's note name. */
function deletedGists(words: string[]): string[] {
  return words.flatMap((word, index) => {
    if (word.startsWith("--delete=")) return [word.slice("--delete=".length)];
    return words[index - 1] === "--delete" ? [word] : [];
  });
}

/** The values of `--report` in `words` (`--report X`, `--report=X`). */
function reportValues(words: string[]): string[] {
  return words.flatMap((word, index) => {
    if (word.startsWith("--report=")) return [word.slice("--report=".length)];
    return words[index - 1] === "--report" ? [word] : [];
  });
}

/** The values of `-o`/`--output` in `words` (`-o X`, `-oX`, `--output X`, `--output=X`). */
function outputValues(words: string[]): string[] {
  return words.flatMap((word, index) => {
    const previous = words[index - 1];
    if (previous === "-o" || previous === "--output") return [word];
    if (word.startsWith("--output=")) return [word.slice("--output=".length)];
    return word.startsWith("-o") && word.length > 2 ? [word.slice(2)] : [];
  });
}

function expandHome(path: string): string {
  return path === "~" || path.startsWith("~/") ? join(homedir(), path.slice(1)) : path;
}

/** `-o ~/x.html`, `--output=~/x.html`: no shell reads these words, so `~` is ours to expand
 * (the CLI would look for a folder named "~"). */
function expandOutputs(words: string[]): string[] {
  return words.map((word, index) => {
    const previous = words[index - 1];
    if (previous === "-o" || previous === "--output") return expandHome(word);
    if (word.startsWith("--output=")) return "--output=" + expandHome(word.slice(9));
    if (word.startsWith("-o~")) return "-o" + expandHome(word.slice(2));
    return word;
  });
}

/** Options from an environment variable first, so options typed after the command win. */
function envArgs(name: string): string[] {
  try {
    return splitArgs(process.env[name] ?? "");
  } catch (error) {
    throw error instanceof UserError ? new UserError(`${name}: ${error.message}`) : error;
  }
}

// --- /live-html ------------------------------------------------------------------------------

interface LiveWatch {
  child: ChildProcess;
  url: string;
  port: number;
  file: string;
  args: string[];
  /** What the watcher said on stderr before its address (its warnings about the first page);
   * later warnings go to the user as they come (see startWatch). */
  stderr: string[];
  /** Its last 20 stderr lines so far: why it ended, when it ends on its own. */
  recent: string[];
}

interface LiveState {
  watch?: LiveWatch;
  /** A watcher started and not yet serving (its first page is being made). */
  starting?: ChildProcess;
  /** Bumped by every start and stop: an await that comes back to another one gives up. */
  generation: number;
  /** The address's secret, one per Pi process, and the last port: an open page keeps its
   * address across moves, and across a stop and a new /live-html. */
  secret: string;
  port?: number;
  /** Set by session_shutdown for /new, /resume, /fork: the next instance moves the watch. */
  follow?: boolean;
  /** Waiting for a new session's file, which Pi writes at the first reply. */
  waiting?: ReturnType<typeof setInterval>;
  /** Tells the user something about the running watcher (a later warning, its end), through the
   * newest context Pi gave: a command's or session_start's (an older one throws once Pi has
   * replaced the session). Unset between session_shutdown and the next session_start. */
  notify?: (message: string, level: Level) => void;
  /** What came while no context could say it (during /new, /resume, a reload): said next. */
  untold: { message: string; level: Level }[];
}

// The first page of a big session takes as long as an export.
const LIVE_START_TIMEOUT_MS = EXPORT_TIMEOUT_MS;
const LIVE_URL = /^http:\/\/127\.0\.0\.1:(\d+)\/[A-Za-z0-9_-]{16,64}\/$/;
const LIVE_KEY = Symbol.for("pi-session-export/live-html");

/** Shared by every instance of this extension in the Pi process (see the top of the file). */
function liveState(): LiveState {
  const store = globalThis as unknown as Record<symbol, LiveState | undefined>;
  let state = store[LIVE_KEY];
  if (!state) {
    const made: LiveState = { generation: 0, secret: randomBytes(18).toString("base64url"), untold: [] };
    // a Pi that ends without session_shutdown must not leave a server behind (the watcher
    // also ends when its stdin, a pipe from Pi, closes: a Pi killed outright)
    process.once("exit", () => {
      made.watch?.child.kill("SIGTERM");
      made.starting?.kill("SIGTERM");
    });
    state = store[LIVE_KEY] = made;
  }
  return state;
}

class Superseded extends Error {}

// at most this many messages wait for the next context (a watcher that warns on every version)
const MAX_UNTOLD = MAX_NOTES;

/** Say `message` about the live page now, or once Pi gives the extension a context again. */
function tell(state: LiveState, message: string, level: Level): void {
  if (state.notify) {
    try {
      state.notify(message, level);
      return;
    } catch {
      state.notify = undefined; // a context Pi has replaced: wait for the new one
    }
  }
  if (state.untold.length < MAX_UNTOLD) state.untold.push({ message, level });
}

/** Say the live page's news through `ctx` from now on (and what waited for it). */
function listen(state: LiveState, ctx: ExtensionContext): void {
  if (!ctx.hasUI) return;
  state.notify = (message, level) => ctx.ui.notify(message, level);
  for (const { message, level } of state.untold.splice(0)) tell(state, message, level);
}

/** The watcher's warnings among `stderr` lines, as notes (without the prefix, nor a word given
 * in `args`); its "watch --redact" advice is said as the command that does it here. */
function watchWarnings(stderr: string[], args: string[]): string[] {
  return stderr
    .filter((l) => l.startsWith("pi-session: warning:"))
    .map((l) => withoutTyped(withoutPrefix(l), args).replace(/\bwatch --redact\b/g, "/live-html --redact"));
}

/** Start `pi-session watch FILE --port PORT [--agent-context CONTEXT] ARGS`; resolves once it
 * printed its address, and rejects with Superseded when another start or a stop came meanwhile.
 * The context file is written for this start only and removed once the watcher serves or has
 * failed to (it reads the file once, at its start). */
function startWatch(
  state: LiveState,
  cli: string,
  file: string,
  port: number,
  args: string[],
  cwd: string,
  context: Record<string, unknown> | undefined,
): Promise<LiveWatch> {
  const generation = ++state.generation;
  return new Promise((resolveWatch, reject) => {
    const written = writeAgentContext(context);
    // before the options typed: a --agent-context of the user's own comes later and wins
    const given = written ? ["--agent-context", written.file] : [];
    let child: ChildProcess;
    try {
      child = spawn(cli, ["watch", file, "--port", String(port), "--until-stdin-closes", ...given, ...args], {
        cwd,
        env: { ...process.env, PI_SESSION_WATCH_SECRET: state.secret },
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch (error) {
      if (written) removeQuietly(written.dir);
      throw error;
    }
    state.starting = child;
    const stderr: string[] = [];
    let stdout = "";
    let settled = false;
    let serving: LiveWatch | undefined; // once it printed its address
    let partial = ""; // a stderr line not yet ended
    const finish = (error: Error | undefined, url?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (written) removeQuietly(written.dir); // read by now, or never to be
      if (state.starting === child) state.starting = undefined;
      if (state.generation !== generation) error = new Superseded(); // stopped, or started anew
      if (error || !url) {
        child.kill("SIGTERM");
        reject(error);
        return;
      }
      // what it said so far goes with the address; what it says from now on, to the user
      serving = { child, url, port: Number(LIVE_URL.exec(url)?.[1]), file, args, stderr: [...stderr], recent: stderr };
      resolveWatch(serving);
    };
    const timer = setTimeout(
      () => finish(new UserError(`no page after ${Math.round(LIVE_START_TIMEOUT_MS / 1000)} s`)),
      LIVE_START_TIMEOUT_MS,
    );
    child.stdout?.setEncoding("utf8");
    child.stderr?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      stdout += chunk;
      const at = stdout.indexOf("\n");
      if (at < 0) return;
      const url = stdout.slice(0, at).trim();
      finish(LIVE_URL.test(url) ? undefined : new UserError(`pi-session watch printed ${JSON.stringify(url.slice(0, 80))}`), url);
    });
    const heard = (said: string[]) => {
      if (!said.length) return;
      stderr.push(...said);
      stderr.splice(0, Math.max(0, stderr.length - 20));
      // a warning about a later version (a token just written to the session, a damaged
      // line): said at once, while this watcher is the one running (not one being stopped)
      if (!serving || state.watch !== serving) return;
      const warnings = watchWarnings(said, args);
      if (warnings.length) tell(state, [`Live page ${serving.url}:`, ...warnings.slice(0, MAX_NOTES)].join("\n"), "warning");
    };
    child.stderr?.on("data", (chunk: string) => {
      const text = partial + chunk;
      const end = text.lastIndexOf("\n");
      partial = text.slice(end + 1);
      if (end >= 0) heard(lines(text.slice(0, end)));
    });
    child.stderr?.on("end", () => {
      heard(lines(partial));
      partial = "";
    });
    child.stdin?.on("error", () => {}); // the watcher gone first: nothing to tell
    child.on("error", (error) => finish(new UserError(`could not run ${cli}: ${error.message}`)));
    child.on("exit", (code) => {
      const reason = errorLine(stderr, args, "watch");
      finish(new UserError(reason === undefined ? `pi-session watch ended (exit code ${code})` : withoutTyped(reason, args)));
    });
  });
}

function killAndWait(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  return exited.finally(() => clearTimeout(timer));
}

/** Stop the watcher, and one being started, and wait until they have let go of the port. */
async function stopWatch(state: LiveState): Promise<void> {
  state.generation++;
  if (state.waiting) clearInterval(state.waiting);
  state.waiting = undefined;
  const children = [state.watch?.child, state.starting].filter((c): c is ChildProcess => c !== undefined);
  state.watch = undefined;
  state.starting = undefined;
  await Promise.all(children.map(killAndWait));
}

/** A watcher that ends on its own (killed, a crash) is forgotten, so /live-html starts anew,
 * and the user is told: the page stopped changing. The ends this extension causes (a stop, a
 * start with other options, a move to another session, Pi quitting) forget it first. */
function keep(state: LiveState, watch: LiveWatch): void {
  state.watch = watch;
  state.port = watch.port;
  watch.child.once("exit", (code: number | null, signal: NodeJS.Signals | null) => {
    if (state.watch !== watch) return;
    state.watch = undefined;
    let told = false;
    const say = () => {
      if (told) return;
      told = true;
      const errors = watch.recent.filter((l) => l.startsWith("pi-session: error:") || l.startsWith("Error:"));
      const said = errorLine(errors, watch.args, "watch");
      const why = said
        ? withoutTyped(said, watch.args)
        : signal
          ? `pi-session watch was ended by ${signal}`
          : `pi-session watch ended (exit code ${code})`;
      tell(state, `/live-html stopped: ${why}; run /live-html again for a live page`, "error");
    };
    // its last words (an error line) may still be in the pipe: read them first, but not for
    // long (a browser it started may hold the pipe open)
    const stderr = watch.child.stderr;
    if (!stderr || stderr.readableEnded) return say();
    const wait = setTimeout(say, 1_000);
    stderr.once("end", () => {
      clearTimeout(wait);
      say();
    });
  });
}

/** A watch's options for starting it again on the same port: the page is open already
 * (and follows it there), so `--open` would open one more tab each time. */
function unopened(args: string[]): string[] {
  return args.filter((word) => word !== "--open");
}

/** After /new, /resume or /fork: the same page (port and options) on the new session's file,
 * once it exists (Pi writes a new session's file at its first reply). */
function follow(pi: ExtensionAPI, state: LiveState, ctx: ExtensionContext): void {
  const watch = state.watch;
  const file = ctx.sessionManager.getSessionFile();
  if (!watch || !file || file === watch.file) return;
  if (state.waiting) clearInterval(state.waiting); // an earlier /new's wait
  state.waiting = undefined;
  let waiting: ReturnType<typeof setInterval> | undefined;
  const move = async () => {
    if (state.watch !== watch) {  // stopped or started anew meanwhile: nothing to move
      if (waiting) clearInterval(waiting);
      return;
    }
    if (!existsSync(file)) return;
    if (waiting) clearInterval(waiting);
    if (state.waiting === waiting) state.waiting = undefined;
    try {
      const cli = findCli(process.env, extensionDir);
      await stopWatch(state);
      // the new session's own prompt and tools (a /resume'd one may have had others)
      const moved = await startWatch(state, cli, file, watch.port, unopened(watch.args), ctx.cwd, agentContext(pi, ctx));
      keep(state, moved);
      // what it says of the new session's first page (a token in it) is news too
      const warnings = watchWarnings(moved.stderr, moved.args);
      if (warnings.length) tell(state, [`Live page ${moved.url}:`, ...warnings.slice(0, MAX_NOTES)].join("\n"), "warning");
    } catch (error) {
      if (error instanceof Superseded) return; // a stop, or a /live-html, came meanwhile
      const message = error instanceof UserError ? error.message : String(error);
      tell(state, `/live-html could not follow the new session: ${message}`, "error");
    }
  };
  if (existsSync(file)) void move();
  else {
    waiting = state.waiting = setInterval(() => void move(), 1_000);
    waiting.unref?.();
  }
}

/** A stray first word as the error may name it: a file name (`page.html`, the likely slip: it is
 * how /export-html starts) is shown, anything else (it may be a token) is not. */
function fileNameOrTyped(word: string): string {
  return /^[\w ~./-]{1,40}\.[A-Za-z]{2,5}$/.test(word) ? JSON.stringify(word) : `a word like that ${TYPED}`;
}

async function liveCommand(pi: ExtensionAPI, rawArgs: string, ctx: ExtensionCommandContext): Promise<void> {
  try {
    const words = splitArgs(rawArgs);
    const state = liveState();
    if (words[0] === "stop" && words.length === 1) {
      const url = state.watch?.url;
      await stopWatch(state);
      report(ctx, url ? `Stopped the live page ${url}` : "No live page is running.", "info");
      return;
    }
    const defaults = envArgs("PI_SESSION_WATCH_ARGS");
    for (const [source, list] of [["PI_SESSION_WATCH_ARGS", defaults], [undefined, words]] as const) {
      const where = source ? `${source}: ` : "";
      if (list.some((w) => w === "--help" || w === "-h"))
        throw new UserError(`${where}see \`pi-session watch --help\` in a terminal for the options`);
      // an option's value may be any word (`--port 8765`); a first word must be an option
      if (list.length && !list[0].startsWith("-"))
        throw new UserError(`${where}/live-html takes watch options (or stop), not ${fileNameOrTyped(list[0])}`);
      refuseSessionChoice(list, "live", source);
    }
    // print and JSON modes (`pi -p "/live-html"`) exit right after the command, and the watcher
    // with them: an address would point at nothing
    if (!ctx.hasUI)
      throw new UserError("the live page needs an interactive Pi (or RPC mode): here Pi exits, and the page with it, at once");
    listen(state, ctx); // its later warnings, and its end if it dies, are said here
    const running = state.watch;
    const unsaved = ctx.sessionManager.getSessionFile();
    if (running && state.waiting && words.length === 0 && unsaved && unsaved !== running.file && !existsSync(unsaved)) {
      // after /new: the watcher stays on the last session until Pi writes this one's file
      // (follow() is waiting for it, and moves the page then)
      report(
        ctx,
        `Live page: ${running.url} (still showing the previous session; it moves to this one at its first reply)`,
        "info",
      );
      return;
    }
    const { file } = currentSession(ctx);
    if (state.watch && state.watch.file === file && words.length === 0) {
      report(ctx, `Live page: ${state.watch.url} (already running; /live-html stop ends it)`, "info");
      return;
    }
    const cli = findCli(process.env, extensionDir);
    const previous = state.watch;
    const port = previous?.port ?? state.port ?? 0; // an open page keeps its address
    await stopWatch(state);
    if (ctx.hasUI) ctx.ui.setStatus(STATUS_KEY, "Starting the live page…");
    let watch: LiveWatch;
    const args = [...defaults, ...words];
    try {
      try {
        watch = await startWatch(state, cli, file, port, args, ctx.cwd, agentContext(pi, ctx));
      } catch (error) {
        // the last page's port, taken by another program since: any free one
        if (previous || !port || !(error instanceof UserError) || !/ is in use/.test(error.message)) throw error;
        watch = await startWatch(state, cli, file, 0, args, ctx.cwd, agentContext(pi, ctx));
      }
    } catch (error) {
      if (error instanceof Superseded) throw new UserError("stopped before its first page was made");
      if (!previous) throw error;
      // a mistyped option must not end the page that was running: start it again as it was
      keep(state, await startWatch(state, cli, previous.file, previous.port, unopened(previous.args), ctx.cwd, agentContext(pi, ctx)));
      const message = error instanceof UserError ? error.message : String(error);
      throw new UserError(`${message} (the live page goes on as it was)`);
    } finally {
      if (ctx.hasUI) ctx.ui.setStatus(STATUS_KEY, undefined);
    }
    keep(state, watch);
    const notes = watch.stderr
      .filter((l) => l.startsWith("pi-session:") && !l.includes(" watching "))
      .map((l) => withoutTyped(withoutPrefix(l), args).replace(/\bwatch --redact\b/g, "/live-html --redact"))
      .slice(0, MAX_NOTES);
    const message = [
      `Live page: ${watch.url}`,
      "It is made again as the session grows, and follows it into /new and /resume; /live-html stop ends it.",
      ...notes,
    ].join("\n");
    report(ctx, message, notes.some((n) => n.startsWith("warning:")) ? "warning" : "info");
  } catch (error) {
    const message =
      error instanceof UserError ? error.message : `unexpected error in the pi-session extension: ${String(error)}`;
    report(ctx, `/live-html failed: ${message}`, "error");
  }
}

export default function piSessionExport(pi: ExtensionAPI): void {
  pi.registerCommand("live-html", {
    description: "A live page of this session on 127.0.0.1, made again as it grows: [stop] [watch options]",
    handler: (rawArgs, ctx) => liveCommand(pi, rawArgs, ctx),
  });

  pi.on("session_shutdown", async (event) => {
    const state = liveState();
    state.notify = undefined; // this instance's context is about to be replaced
    if (!state.watch) return;
    if (event.reason === "quit") await stopWatch(state);
    else if (event.reason !== "reload") state.follow = true; // the same session after a reload
  });

  pi.on("session_start", async (_event, ctx) => {
    const state = liveState();
    listen(state, ctx);
    if (!state.follow) return;
    state.follow = false;
    follow(pi, state, ctx);
  });

  pi.registerCommand("export-html", {
    description: "Export the current branch to HTML with pi-session: [path] [export options]",
    handler: (rawArgs, ctx) =>
      runCli(pi, ctx, {
        what: "export",
        status: "Exporting session to HTML…",
        timeoutMs: EXPORT_TIMEOUT_MS,
        args: (c) => {
          const defaults = envArgs("PI_SESSION_EXPORT_ARGS");
          refuseNonFileOutput(defaults, "export", "PI_SESSION_EXPORT_ARGS");
          refuseSessionChoice(defaults, "export", "PI_SESSION_EXPORT_ARGS");
          const words = splitArgs(rawArgs);
          refuseNonFileOutput(words, "export");
          refuseSessionChoice(words, "export");
          // an empty first word (`/export-html ''`) is no path: the default name, not an extra word
          if (words[0] === "") words.shift();
          // A first word that is not an option is the output file, relative to Pi's folder.
          const output = words[0] && !words[0].startsWith("-") ? words.shift() : undefined;
          const target = output ? ["-o", resolve(c.cwd, expandHome(output))] : [];
          const all = expandOutputs([...defaults, ...target, ...words]);
          // the CLI prints the path it wrote as one line, which is how the result is found
          if (outputValues(all).some((path) => /[\r\n]/.test(path)))
            throw new UserError("the file name has a line break: give a name without one");
          // as typed, and with ~ expanded (how the CLI may name them)
          const given = [...defaults, ...(output ? [output, expandHome(output)] : []), ...words];
          return { words: all, session: true, typed: [...given, ...expandOutputs(given)] };
        },
        success: (stdout, notes, c) => {
          // The CLI prints the written path (relative to its working directory, Pi's cwd).
          const written = pathLines(stdout).at(-1); // (trimmed, "page.html " was not found)
          const where = written && resolve(c.cwd, written);
          if (!where || !existsSync(where)) return undefined;
          return [`Exported to ${where}`, ...notes].join("\n");
        },
      }),
  });

  pi.registerCommand("share-html", {
    description: "Share the current branch as a secret gist with pi-session: [share options]",
    handler: (rawArgs, ctx) =>
      runCli(pi, ctx, {
        what: "share",
        status: "Sharing session as a gist…",
        timeoutMs: SHARE_TIMEOUT_MS,
        args: () => {
          const defaults = envArgs("PI_SESSION_SHARE_ARGS");
          refuseNonFileOutput(defaults, "share", "PI_SESSION_SHARE_ARGS");
          refuseSessionChoice(defaults, "share", "PI_SESSION_SHARE_ARGS");
          const words = splitArgs(rawArgs);
          refuseNonFileOutput(words, "share");
          refuseSessionChoice(words, "share");
          // `--delete GIST` removes a gist and takes no session (the CLI refuses SESSION and --leaf).
          if (words.some((w) => w === "--delete" || w.startsWith("--delete=")))
            return { words: [...deleteOptions(defaults), ...words], session: false, shown: deletedGists(words) };
          return { words: [...defaults, ...words], session: true };
        },
        success: (stdout, notes, c) => {
          const out = lines(stdout);
          const view = out.find((l) => l.startsWith("View:"))?.slice(5).trim();
          const gist = out.find((l) => l.startsWith("Gist:"))?.slice(5).trim();
          if (view) return [`Shared: ${view}`, ...(gist ? [`Gist: ${gist}`] : []), ...notes].join("\n");
          const dry = notes.find((n) => n.startsWith("dry run: wrote "));
          if (dry) {
            // the files it wrote, where Pi's user finds them (the CLI prints them relative to
            // Pi's folder), then the rest of its notes
            const files = pathLines(stdout).map((name) => resolve(c.cwd, name)).join(", ");
            const rest = notes.filter((n) => n !== dry);
            const sent = dry.slice(dry.lastIndexOf(" (")).replace(/; nothing sent$/, "");
            return [`Dry run, nothing sent: wrote ${files}${sent}`, ...rest].join("\n");
          }
          // --dry-run (the files written) and --delete ("Deleted gist X") print other things; show
          // them as they are, but only once the CLI has said it finished.
          const finished =
            gist !== undefined ||
            out.some((l) => l.startsWith("Deleted gist")) ||
            notes.some((n) => n.startsWith("dry run:"));
          return finished ? [...out, ...notes].join("\n") : undefined;
        },
      }),
  });
}
