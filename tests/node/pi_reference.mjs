#!/usr/bin/env node
// Reference oracle: what Pi's own SessionManager (npm @mariozechner/pi-coding-agent) makes of
// session files. Prints one JSON line per input file; see tests/node/README.md.
//
//   node tests/node/pi_reference.mjs --pkg PI_HOME/node_modules/@mariozechner/pi-coding-agent/dist/index.js FILE...
//
// Pi rewrites legacy v1/v2 files in place on open and truncates files without a valid header,
// so every FILE is copied into a fresh temp dir first and Pi only ever sees the copy.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

function usage(msg) {
  if (msg) process.stderr.write(`pi_reference: ${msg}\n`);
  process.stderr.write("usage: node tests/node/pi_reference.mjs --pkg PATH/dist/index.js FILE [FILE...]\n");
  process.exit(2);
}

const argv = process.argv.slice(2);
let pkg = null;
const files = [];
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--pkg") pkg = argv[++i];
  else if (a.startsWith("--pkg=")) pkg = a.slice(6);
  else if (a === "--") files.push(...argv.slice(i + 1)), (i = argv.length);
  else if (a === "-h" || a === "--help") usage();
  else files.push(a);
}
if (!pkg) usage("--pkg is required");
if (files.length === 0) usage("no FILE given");

const { SessionManager } = await import(pathToFileURL(resolve(pkg)).href);
if (typeof SessionManager?.open !== "function") usage(`${pkg} does not export SessionManager.open`);

const num = (x) => x || 0; // same coercion as Pi's HTML computeStats (`cost.input || 0`)

function costs(entries) {
  let total = 0;
  let parts = 0;
  for (const e of entries) {
    if (e.type !== "message" || e.message?.role !== "assistant") continue;
    const c = e.message.usage?.cost;
    if (!c) continue;
    const p = num(c.input) + num(c.output) + num(c.cacheRead) + num(c.cacheWrite);
    parts += p;
    total += typeof c.total === "number" ? c.total : p;
  }
  return { total, parts };
}

// Pi's getBranch() walks parentId with no cycle guard (a self-parent or 2-cycle loops forever and
// eventually runs out of memory). Detect that with the same walk before calling it.
function branchHasCycle(sm, leafId) {
  const seen = new Set();
  let cur = leafId ? sm.getEntry(leafId) : undefined;
  while (cur) {
    if (seen.has(cur)) return true;
    seen.add(cur);
    cur = cur.parentId ? sm.getEntry(cur.parentId) : undefined;
  }
  return false;
}

function inspect(sm, copyPath, originalBytes) {
  const header = sm.getHeader();
  const entries = sm.getEntries(); // non-header entries, file order
  const leafId = sm.getLeafId() ?? null;

  // File-order index of each id. Later duplicates win, as in Pi's byId / getTree node map.
  const indexOf = new Map();
  entries.forEach((e, i) => indexOf.set(e.id, i));

  // tree_shape: parent resolution by getTree()'s rules: root if parentId === null or
  // parentId === id; orphan (parent id not in the file) is also a root -> null.
  const treeShape = entries.map((e, i) => {
    if (e.parentId === null || e.parentId === e.id) return [i, null];
    const p = indexOf.get(e.parentId);
    return [i, p === undefined ? null : p];
  });

  // Leaves of Pi's tree (entries reachable from getTree() roots with no children).
  // Entries on a parent cycle are not reachable from any root and are not counted.
  let branches = 0;
  const seen = new Set();
  const stack = [...sm.getTree()];
  while (stack.length) {
    const node = stack.pop();
    if (seen.has(node)) continue; // duplicate ids make getTree() list one node twice
    seen.add(node);
    if (node.children.length === 0) branches++;
    else for (const c of node.children) stack.push(c);
  }

  // Labels: Pi's resolved label map (labelsById, built by _buildIndex). It is private in the
  // typings, so fall back to getLabel() on every entry id if it is ever renamed.
  const labels = {};
  if (sm.labelsById instanceof Map) {
    for (const [k, v] of sm.labelsById) labels[k] = v;
  } else {
    for (const e of entries) {
      const l = sm.getLabel(e.id);
      if (l !== undefined) labels[e.id] = l;
    }
  }

  const out = {
    id: header?.id ?? null,
    version_after: header?.version ?? null,
    leaf_id: leafId,
    leaf_index: leafId === null ? null : indexOf.get(leafId) ?? null,
    active_path: null,
    labels,
    name: sm.getSessionName() ?? null,
    entries: entries.length,
    branches,
  };
  if (branchHasCycle(sm, leafId)) out.active_path_error = "parent cycle on the active path: Pi's getBranch() never returns";
  else out.active_path = sm.getBranch().map((e) => e.id ?? null);
  const c = costs(entries);
  out.cost_total = c.total;
  out.cost_total_parts = c.parts;
  out.rewritten = !readFileSync(copyPath).equals(originalBytes);
  out.tree_shape = treeShape;
  return out;
}

const root = mkdtempSync(join(tmpdir(), "pi-reference-"));
const cleanup = () => rmSync(root, { recursive: true, force: true });
process.on("exit", cleanup);
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(130));

let n = 0;
for (const file of files) {
  const dir = join(root, String(n++));
  let record;
  try {
    mkdirSync(dir);
    const originalBytes = readFileSync(file);
    const copyPath = join(dir, basename(file) || "session.jsonl");
    copyFileSync(file, copyPath);
    const sm = SessionManager.open(copyPath, join(dir, "sessions"));
    record = { file, ...inspect(sm, copyPath, originalBytes) };
  } catch (err) {
    record = { file, error: String(err?.stack?.split("\n")[0] ?? err) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(record)}\n`);
}
