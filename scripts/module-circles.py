#!/usr/bin/env python3
"""Fails when the modules of a crate import each other in a circle.

Usage: scripts/module-circles.py [CRATE_DIR ...]   (default: every crates/*/)

Each source file under a crate's `src/` is one module (`a/b.rs` and `a/b/mod.rs` are
`a::b`; `lib.rs`/`main.rs` is the crate root). An edge A -> B is any path that names B
from A: `crate::b::…`, `super::…` and `self::…` paths (in `use` items and in
expressions), each resolved to the longest module prefix that is a file. `mod x;`
declarations and `pub use` re-exports are not edges (declaring a child, or offering its
items under the parent's path, is not depending on its code), and test-only files
(`tests.rs`, `*_tests.rs`, `tests/…`) and inline `#[cfg(test)] mod` blocks are left out:
tests may import anything. A circle is a strongly connected set of two or more
modules; each is printed with one edge per line (`file:line`) and the exit code is 1.
The same is checked with modules taken whole at each depth of the tree (`a::b::c` read as
`a`, then as `a::b`, …): a subsystem `a/` whose files import `b/` while `b/`'s import
`a/` is a circle even when no two files import each other.

Dependencies between crates are kept one-way by Cargo itself; this keeps them one-way
inside a crate.
"""
import os
import re
import sys

PATH_RE = re.compile(r"\b(crate|super|self)((?:::\s*(?:super|[A-Za-z_][A-Za-z0-9_]*))+)")
USE_GROUP_RE = re.compile(r"\buse\s+(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{", re.S)


def module_of(src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] == "mod":
        rel = rel[:-1]
    if rel in (["lib"], ["main"]):
        rel = []
    return tuple(rel)


def is_test_file(mod):
    return any(p == "tests" or p.endswith("_tests") for p in mod)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.split("\n"))


def cfg_test_cut(text):
    """Drops inline `#[cfg(test)] mod … { … }` blocks: tests may import anything."""
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        out.append("\n" * text[m.start():j].count("\n"))
        i = j
    out.append(text[i:])
    return "".join(out)


def drop_reexports(text):
    """Blanks `pub use …;` and `pub(crate) use …;` items (lines kept for numbering)."""
    return re.sub(r"\bpub(\([^)]*\))?\s+use\s[^;]*;",
                  lambda m: "\n" * m.group(0).count("\n"), text)


def expand_groups(text):
    """`use crate::a::{b, c::d}` -> paths `crate::a::b`, `crate::a::c::d` (line kept)."""
    found = []
    for m in USE_GROUP_RE.finditer(text):
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        body = text[m.end():j - 1]
        line = text.count("\n", 0, m.start()) + 1
        prefix = (m.group(1) + m.group(2)).replace(" ", "")
        for item in split_top(body):
            item = item.strip()
            if not item or item == "self":
                found.append((prefix, line))
                continue
            head = re.match(r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*", item)
            if head:
                found.append((prefix + "::" + head.group(0), line))
    return found


def split_top(body):
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def resolve(here, root, segs, modules):
    if root == "crate":
        base = []
    elif root == "self":
        base = list(here)
    else:
        base = list(here[:-1])
    for s in segs:
        if s == "super":
            base = base[:-1]
        else:
            base.append(s)
    for n in range(len(base), -1, -1):
        cand = tuple(base[:n])
        if cand in modules:
            return cand
    return None


def crate_edges(src):
    files = {}
    for dirpath, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(dirpath, name)
                files[module_of(src, path)] = path
    modules = set(files)
    edges = {}
    for mod, path in files.items():
        if is_test_file(mod):
            continue
        with open(path, encoding="utf-8") as f:
            text = drop_reexports(cfg_test_cut(strip_comments(f.read())))
        paths = [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1)
                 for m in PATH_RE.finditer(text)]
        children = sorted({m[len(mod)] for m in modules
                           if len(m) == len(mod) + 1 and m[:len(mod)] == mod})
        if children:
            bare = re.compile(r"(?<![:\w])(" + "|".join(map(re.escape, children)) +
                              r")((?:::\s*[A-Za-z_][A-Za-z0-9_]*)*)\s*::")
            for m in bare.finditer(text):
                paths.append(("self", "::" + m.group(1) + m.group(2),
                              text.count("\n", 0, m.start()) + 1))
        for full, line in expand_groups(text):
            root, _, rest = full.partition("::")
            paths.append((root, "::" + rest if rest else "", line))
        for root, rest, line in paths:
            segs = [s.strip() for s in rest.split("::") if s.strip()]
            target = resolve(mod, root, segs, modules)
            if target is None or target == mod or is_test_file(target):
                continue
            edges.setdefault(mod, {}).setdefault(target, f"{path}:{line}")
    return files, edges


def sccs(nodes, edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def name(mod):
    return "::".join(mod) or "crate"


def main(argv):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    crates = argv or sorted(
        os.path.join(root, "crates", c) for c in os.listdir(os.path.join(root, "crates")))
    bad = 0
    for crate in crates:
        src = os.path.join(crate, "src")
        if not os.path.isdir(src):
            continue
        files, edges = crate_edges(src)
        found = []
        depth = max((len(m) for m in files), default=0)
        for d in range(1, depth + 1):
            cut = lambda m: m[:d]
            nodes = sorted({cut(m) for m in files if m})
            grouped = {}
            for a, targets in edges.items():
                for b, where in targets.items():
                    ca, cb = cut(a), cut(b)
                    if ca != cb and ca and cb:
                        grouped.setdefault(ca, {}).setdefault(cb, where)
            for comp in sccs(nodes, grouped):
                if sorted(comp) not in [sorted(c) for c, _ in found]:
                    found.append((comp, grouped))
        for comp, edges in found:
            bad += 1
            members = set(comp)
            print(f"{os.path.basename(crate.rstrip('/'))}: circle of {len(comp)} modules: "
                  + ", ".join(sorted(name(m) for m in comp)))
            for a in sorted(comp):
                for b, where in sorted(edges.get(a, {}).items()):
                    if b in members:
                        print(f"    {name(a)} -> {name(b)}   ({os.path.relpath(where, root)})")
    if bad:
        print(f"{bad} module circle(s): a module may import only modules below it")
        return 1
    print("no module circles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
