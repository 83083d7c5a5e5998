#!/usr/bin/env python3
"""Import circles and file sizes across the house (issue 43): exit 1 if any crate has an import circle or a Rust
file is over the line limit.

The drawing. Every crate root (each directory with a Cargo.toml: src/lib.rs, src/main.rs, src/bin/*.rs, tests/*.rs,
benches/*.rs, examples/*.rs, build.rs and every `path = "....rs"` target of its Cargo.toml, e.g. bench/) is walked
through its `mod x;` declarations (x.rs, x/mod.rs, `#[path = "..."]` relative to the declaring file's directory), which
gives each .rs file its module path. An ARROW A -> B means "file A uses a name defined in file B" of the same crate:
  - `use crate::...`, `use super::...`, `use self::...`, a `use` starting with a child module's name, grouped
    `{...}` imports expanded, and qualified paths `crate::a::b`, `super::x`, `self::x` in code;
  - a path resolves through modules as far as it goes, then the name is looked up in the module's file: defined
    there (struct/enum/fn/trait/type/const/static/union/macro_rules!) -> that file; imported there (`use`, incl.
    `pub use` re-exports and globs) -> followed to the file that defines it. So `crate::Foo` re-exported by lib.rs
    points at the file that defines Foo, not at lib.rs.
Not arrows (the standard Rust facade is not a circle):
  - `mod x;` declarations (parent -> child);
  - `pub use` in a module file of names of its own descendants (the room's door: lib.rs / mod.rs re-exporting
    children);
  - any arrow from a file to one of its ANCESTOR module files (a child's `use super::*`, a test module's view of
    the code it tests, a child using a helper its mod.rs holds): a module and its parent are one room.
A CIRCLE is a strongly connected component of more than one file in the arrow graph (Tarjan); each is printed
file -> file with the names that make each arrow.

Sizes: `--max-lines N` also fails for any .rs file over N lines, except the files named by `--exempt` (default: the
compiler's parser, nrt/compiler/src/parser.rs).

Both walks skip hidden directories and directories named target, build, install, log (cargo's and colcon's output)
and node_modules. Not seen: macro-generated paths and `#[macro_export]` macros (a circle through a macro alone).

Usage: scripts/import-circles.py [--root DIR] [--max-lines N] [--exempt PATH]... | --self-test
Python 3 standard library only.
"""

import argparse
import os
import re
import sys
import tempfile

SKIP_DIRS = {"target", ".git", "node_modules", "build", "install", "log"}
DEF_KINDS = r"(?:struct|enum|union|fn|trait|type|const|static|macro_rules!)"


# ---------------------------------------------------------------------------------------------------------------
# Lexing: strip comments, strings and char literals (keeping offsets' line structure is not needed).


def strip_code(text):
    """The text with comments, string and char literals blanked (replaced by spaces), lifetimes kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 260]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            j = n if end < 0 else end + 1 + len(m.group(1))
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "b" and text.startswith('b"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            out.append(" ")
            i += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            m = re.match(r"'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])'", text[i:i + 16])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


# ---------------------------------------------------------------------------------------------------------------
# One file: its `mod` declarations, `use` trees and qualified paths, each at an inline-module position.


MOD_DECL = re.compile(r"((?:#\s*\[[^\]]*\]\s*)*)(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+(r#)?(\w+)\s*([;{])")
USE_DECL = re.compile(r"\b(pub(?:\s*\([^)]*\))?\s+)?use\s+([^;]*);")
QUALIFIED = re.compile(r"(?<![\w$:])((?:crate|super|self)(?:\s*::\s*(?:super|\w+))+)")
PATH_ATTR = re.compile(r'#\s*\[\s*path\s*=\s*"([^"]+)"\s*\]')


def expand_use_tree(tree):
    """`a::{b, c::{d, e as f}, self}` -> [(['a','b'], 'b'), (['a','c','d'], 'd'), (['a','c','e'], 'f'), (['a'], 'a')]."""
    tree = re.sub(r"\s+", " ", tree).strip()
    results = []

    def split_top(s):
        parts, depth, cur = [], 0, ""
        for ch in s:
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
        return [p.strip() for p in parts if p.strip()]

    def walk(prefix, s):
        s = s.strip()
        if s.startswith("::"):
            s = s[2:].strip()
        if s.startswith("{") and s.endswith("}"):
            for part in split_top(s[1:-1]):
                walk(prefix, part)
            return
        brace = s.find("{")
        if brace >= 0:
            head = [p.strip() for p in s[:brace].split("::") if p.strip()]
            walk(prefix + head, s[brace:])
            return
        alias = None
        m = re.match(r"(.*?)\s+as\s+(\w+)$", s)
        if m:
            s, alias = m.group(1), m.group(2)
        segs = [p.strip() for p in s.split("::") if p.strip()]
        if segs and segs[-1] == "self":
            segs = segs[:-1]
        path = prefix + segs
        if not path:
            return
        results.append((path, alias if alias else path[-1]))

    walk([], tree)
    return results


class FileInfo:
    """What one file declares and references."""

    def __init__(self, path):
        self.path = path
        with open(path, encoding="utf-8", errors="replace") as f:
            self.raw = f.read()
        self.code = strip_code(self.raw)
        self.mods = []  # (inline_stack, name, path_attr or None) for `mod x;`
        self.inline_mods = set()  # tuples of inline module stacks
        self.uses = []  # (inline_stack, is_pub, [segments], local_name)
        self.qualified = []  # (inline_stack, [segments])
        self.defs = set()
        self._scan()

    def _inline_stack_at(self, events, pos):
        stack = []
        for start, end, name in events:
            if start < pos < end:
                stack.append(name)
        return tuple(stack)

    def _scan(self):
        code = self.code
        # Inline modules: `mod x {` ... matching `}`.
        events = []
        for m in MOD_DECL.finditer(code):
            if m.group(4) == "{":
                open_at = m.end() - 1
                depth, j = 0, open_at
                while j < len(code):
                    if code[j] == "{":
                        depth += 1
                    elif code[j] == "}":
                        depth -= 1
                        if depth == 0:
                            break
                    j += 1
                events.append((open_at, j, m.group(3)))
        events.sort()
        for m in MOD_DECL.finditer(code):
            if m.group(4) == ";":
                attr = PATH_ATTR.search(self.raw[m.start():m.end()]) if m.group(1) else None
                self.mods.append((self._inline_stack_at(events, m.start()), m.group(3), attr.group(1) if attr else None))
            else:
                self.inline_mods.add(self._inline_stack_at(events, m.end()))
        use_spans = []
        for m in USE_DECL.finditer(code):
            before = code[max(0, m.start() - 1):m.start()]
            if before and (before.isalnum() or before == "_"):
                continue
            stack = self._inline_stack_at(events, m.start())
            for segs, local in expand_use_tree(m.group(2)):
                self.uses.append((stack, bool(m.group(1)), segs, local))
            use_spans.append((m.start(), m.end()))
        for m in QUALIFIED.finditer(code):
            if any(s <= m.start() < e for s, e in use_spans):
                continue
            segs = [p.strip() for p in m.group(1).split("::")]
            self.qualified.append((self._inline_stack_at(events, m.start()), segs))
        for m in re.finditer(r"\b" + DEF_KINDS + r"\s+(?:r#)?(\w+)", code):
            self.defs.add(m.group(1))
        for m in re.finditer(r"\bmacro_rules!\s*(\w+)", code):
            self.defs.add(m.group(1))


# ---------------------------------------------------------------------------------------------------------------
# One crate (one root file's module tree).


class Crate:
    def __init__(self, root_file, cache):
        self.root_file = os.path.normpath(root_file)
        self.cache = cache
        self.file_of = {}  # module path tuple -> file
        self.module_of = {}  # file -> module path tuple
        self.children = {}  # module path tuple -> set of child names (file or inline)
        self._load(self.root_file, (), True)

    def info(self, path):
        if path not in self.cache:
            self.cache[path] = FileInfo(path)
        return self.cache[path]

    def _load(self, path, modpath, is_dir_owner):
        if path in self.module_of:
            return
        self.file_of[modpath] = path
        self.module_of[path] = modpath
        self.children.setdefault(modpath, set())
        info = self.info(path)
        base = os.path.dirname(path)
        for stack in info.inline_mods:
            for k in range(1, len(stack) + 1):
                self.children.setdefault(modpath + stack[:k - 1], set()).add(stack[k - 1])
        for stack, name, attr in info.mods:
            child_mod = modpath + stack + (name,)
            if stack:
                for k in range(1, len(stack) + 1):
                    self.children.setdefault(modpath + stack[:k - 1], set()).add(stack[k - 1])
            self.children.setdefault(modpath + stack, set()).add(name)
            if attr:
                cand = [os.path.normpath(os.path.join(base, attr))]
            else:
                d = base if is_dir_owner else os.path.join(base, os.path.splitext(os.path.basename(path))[0])
                d = os.path.join(d, *stack)
                cand = [os.path.join(d, name + ".rs"), os.path.join(d, name, "mod.rs")]
            for c in cand:
                if os.path.isfile(c):
                    owner = os.path.basename(c) == "mod.rs"
                    self._load(os.path.normpath(c), child_mod, owner)
                    break

    # -- resolution ---------------------------------------------------------------------------------------------

    def module_file(self, modpath):
        """The file holding module `modpath` (an inline module lives in its nearest file ancestor)."""
        while modpath not in self.file_of:
            modpath = modpath[:-1]
        return self.file_of[modpath], modpath

    def absolute(self, here, segs):
        """Segments relative to module `here` -> absolute segments within the crate, or None (another crate)."""
        if not segs:
            return None
        first = segs[0]
        if first == "crate":
            return list(segs[1:])
        if first in ("super", "self"):
            cur = list(here)
            rest = list(segs)
            while rest and rest[0] in ("super", "self"):
                if rest[0] == "super":
                    if not cur:
                        return None
                    cur.pop()
                rest.pop(0)
            return cur + rest
        if first in self.children.get(tuple(here), set()):
            return list(here) + list(segs)
        return None

    def resolve(self, abs_segs, depth=0):
        """Absolute segments -> (file, name or None) of the definition."""
        mod = ()
        rest = list(abs_segs)
        while rest and rest[0] in self.children.get(mod, set()):
            mod = mod + (rest.pop(0),)
        path, file_mod = self.module_file(mod)
        if not rest or rest[0] == "*" or depth > 12:
            return path, None
        name = rest[0]
        info = self.info(path)
        inline = mod[len(file_mod):]
        if name in info.defs:
            return path, name
        for stack, _pub, segs, local in info.uses:
            if local == name and stack == inline and segs and segs[-1] != "*":
                target = self.absolute(mod, segs)
                if target is not None:
                    return self.resolve(target + rest[1:], depth + 1)
        for stack, _pub, segs, _local in info.uses:
            if stack == inline and segs and segs[-1] == "*":
                target = self.absolute(mod, segs[:-1])
                if target is None:
                    continue
                found = self.resolve(target + [name], depth + 1)
                if found[1] is not None and name in self.info(found[0]).defs:
                    return found
        return path, name

    def is_ancestor_file(self, a, b):
        """Is file b the module file of an ancestor of file a's module?"""
        ma, mb = self.module_of[a], self.module_of[b]
        return len(mb) < len(ma) and ma[:len(mb)] == mb

    def arrows(self):
        """{(from_file, to_file): set of names}."""
        out = {}
        for path, modpath in self.module_of.items():
            info = self.info(path)
            refs = []
            for stack, is_pub, segs, _local in info.uses:
                here = modpath + stack
                target = self.absolute(here, segs)
                if target is None:
                    continue
                if is_pub and len(target) > len(here) and tuple(target[:len(here)]) == tuple(here):
                    continue  # the door: a module re-exporting its own descendants
                refs.append(target)
            for stack, segs in info.qualified:
                target = self.absolute(modpath + stack, segs)
                if target is not None:
                    refs.append(target)
            for target in refs:
                to, name = self.resolve(target)
                if to == path or self.is_ancestor_file(path, to):
                    continue
                out.setdefault((path, to), set()).add(name or "::".join(target) or "crate")
        return out


def tarjan(nodes, edges):
    """Strongly connected components (lists of nodes) of the directed graph."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = [0]
    succ = {}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in succ.get(v, []):
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
            comps.append(comp)

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return comps


# ---------------------------------------------------------------------------------------------------------------
# The house.


def walk_rs(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("."))
        for f in sorted(files):
            if f.endswith(".rs"):
                yield os.path.join(d, f)


def crate_roots(root):
    """Every root file of every Cargo package under `root`."""
    roots = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("."))
        if "Cargo.toml" not in files:
            continue
        found = []
        for rel in ("src/lib.rs", "src/main.rs", "build.rs"):
            if os.path.isfile(os.path.join(d, rel)):
                found.append(os.path.join(d, rel))
        for sub in ("src/bin", "tests", "benches", "examples"):
            p = os.path.join(d, sub)
            if os.path.isdir(p):
                for f in sorted(os.listdir(p)):
                    if f.endswith(".rs"):
                        found.append(os.path.join(p, f))
                    elif os.path.isfile(os.path.join(p, f, "main.rs")):
                        found.append(os.path.join(p, f, "main.rs"))
        with open(os.path.join(d, "Cargo.toml"), encoding="utf-8") as f:
            for m in re.finditer(r'^\s*path\s*=\s*"([^"]+\.rs)"', f.read(), re.M):
                found.append(os.path.join(d, m.group(1)))
        for p in found:
            p = os.path.normpath(p)
            if os.path.isfile(p) and p not in roots:
                roots.append(p)
    return roots


def find_circles(root):
    """[(sorted files, [(from, to, names)])] of every circle, deduplicated across crates sharing files."""
    cache, seen, circles = {}, set(), []
    for r in crate_roots(root):
        crate = Crate(r, cache)
        arrows = crate.arrows()
        for comp in tarjan(list(crate.module_of), list(arrows)):
            if len(comp) < 2:
                continue
            key = tuple(sorted(comp))
            if key in seen:
                continue
            seen.add(key)
            members = set(comp)
            edges = sorted((a, b, sorted(n)) for (a, b), n in arrows.items() if a in members and b in members)
            circles.append((list(key), edges))
    return circles


def oversized(root, max_lines, exempt):
    exempt = {os.path.normpath(os.path.join(root, e)) for e in exempt}
    out = []
    for p in walk_rs(root):
        if os.path.normpath(p) in exempt:
            continue
        with open(p, encoding="utf-8", errors="replace") as f:
            n = sum(1 for _ in f)
        if n > max_lines:
            out.append((p, n))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--max-lines", type=int, default=None)
    ap.add_argument("--exempt", action="append", default=None)
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args(argv)
    if args.self_test:
        return self_test()
    root = os.path.abspath(args.root)
    bad = False
    for files, edges in find_circles(root):
        bad = True
        print(f"import circle of {len(files)} files:")
        for a, b, names in edges:
            print(f"  {os.path.relpath(a, root)} -> {os.path.relpath(b, root)}: {', '.join(names)}")
    if args.max_lines is not None:
        exempt = args.exempt if args.exempt is not None else ["nrt/compiler/src/parser.rs"]
        for p, n in oversized(root, args.max_lines, exempt):
            bad = True
            print(f"{os.path.relpath(p, root)}: {n} lines (limit {args.max_lines})")
    if not bad:
        print("no import circle" + (f", no Rust file over {args.max_lines} lines" if args.max_lines else ""))
    return 1 if bad else 0


# ---------------------------------------------------------------------------------------------------------------
# Self-test: small crates on disk.


def self_test():
    cases = [
        # (name, files, expected circles as sets of relative files)
        ("sibling circle through use crate and super paths", {
            "Cargo.toml": "",
            "src/lib.rs": "mod a;\nmod b;\n",
            "src/a.rs": "use crate::b::B;\npub struct A;\n",
            "src/b.rs": "pub struct B;\nfn f() { let _ = super::a::A; }\n",
        }, [{"src/a.rs", "src/b.rs"}]),
        ("facade: lib re-exports children, children use crate::Name (resolved to the defining file)", {
            "Cargo.toml": "",
            "src/lib.rs": "mod a;\nmod b;\npub use a::A;\npub use b::B;\n",
            "src/a.rs": "pub struct A;\n",
            "src/b.rs": "use crate::A;\npub struct B(A);\n",
        }, []),
        ("re-export followed: a -> (lib re-export) -> b and b -> a is a circle", {
            "Cargo.toml": "",
            "src/lib.rs": "mod a;\nmod b;\npub use b::B;\n",
            "src/a.rs": "use crate::B;\npub struct A;\n",
            "src/b.rs": "pub struct B;\nimpl B { fn a() -> crate::a::A { crate::a::A } }\n",
        }, [{"src/a.rs", "src/b.rs"}]),
        ("child to its mod.rs is not an arrow; mod.rs/child pairs are one room", {
            "Cargo.toml": "",
            "src/lib.rs": "mod r;\n",
            "src/r/mod.rs": "mod inputs;\nuse inputs::In;\npub fn rec() {}\n",
            "src/r/inputs.rs": "use super::rec;\npub struct In;\n",
        }, []),
        ("grouped imports, nested groups, self and aliases", {
            "Cargo.toml": "",
            "src/lib.rs": "mod a;\nmod b;\nmod c;\n",
            "src/a.rs": "use crate::{b::{self, B as Bee}, c::*};\npub struct A;\n",
            "src/b.rs": "pub struct B;\n",
            "src/c.rs": "// use crate::a::A; in a comment\nconst S: &str = \"crate::a::A\";\npub fn c() { let _ = crate::a::A; }\n",
        }, [{"src/a.rs", "src/c.rs"}]),
        ("three-file circle via #[path] and a mod.rs directory", {
            "Cargo.toml": "",
            "src/main.rs": "mod x;\n#[path = \"other/y_impl.rs\"]\nmod y;\n",
            "src/x/mod.rs": "mod z;\npub use z::Z;\npub fn x() { crate::y::y(); }\n",
            "src/x/z.rs": "pub struct Z;\n",
            "src/other/y_impl.rs": "pub fn y() { crate::x::x(); let _ = crate::x::Z; }\n",
        }, [{"src/x/mod.rs", "src/other/y_impl.rs"}]),
        ("inline test module: super:: inside `mod tests {}` means the file's own module", {
            "Cargo.toml": "",
            "src/lib.rs": "mod a;\nmod b;\n",
            "src/a.rs": "pub struct A;\n#[cfg(test)]\nmod tests { use super::A; use crate::b::B; }\n",
            "src/b.rs": "pub struct B;\nmod inner { use super::super::a::A; }\n",
        }, [{"src/a.rs", "src/b.rs"}]),
        ("non-mod.rs file's children live in a directory named after it; glob re-export followed", {
            "Cargo.toml": "",
            "src/lib.rs": "pub mod p;\nmod q;\n",
            "src/p.rs": "mod k;\npub use k::*;\n",
            "src/p/k.rs": "pub struct K;\npub fn k() { let _ = crate::q::Q; }\n",
            "src/q.rs": "pub struct Q;\nuse crate::p::K;\n",
        }, [{"src/p/k.rs", "src/q.rs"}]),
        ("another crate's paths and Self:: are not arrows", {
            "Cargo.toml": "",
            "src/lib.rs": "mod a;\nmod b;\n",
            "src/a.rs": "use other::b::B;\npub struct A;\nimpl A { fn f() -> Self { Self::g() } fn g() -> Self { A } }\n",
            "src/b.rs": "use crate::a::A;\npub struct B;\n",
        }, []),
    ]
    failures = 0
    for name, files, expected in cases:
        with tempfile.TemporaryDirectory() as d:
            for rel, text in files.items():
                p = os.path.join(d, rel)
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "w", encoding="utf-8") as f:
                    f.write(text)
            got = [set(os.path.relpath(f, d) for f in files_) for files_, _ in find_circles(d)]
            if sorted(map(sorted, got)) != sorted(map(sorted, expected)):
                failures += 1
                print(f"FAIL {name}: expected {expected}, got {got}")
            else:
                print(f"ok   {name}")
    # Line limit.
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "src"))
        for rel, n in (("src/big.rs", 11), ("src/small.rs", 10), ("src/parser.rs", 40)):
            with open(os.path.join(d, rel), "w") as f:
                f.write("\n" * n)
        got = [os.path.relpath(p, d) for p, _ in oversized(d, 10, ["src/parser.rs"])]
        if got != ["src/big.rs"]:
            failures += 1
            print(f"FAIL line limit: got {got}")
        else:
            print("ok   line limit")
    tree = expand_use_tree("a::{b, c::{d, e as f}, self}")
    if tree != [(["a", "b"], "b"), (["a", "c", "d"], "d"), (["a", "c", "e"], "f"), (["a"], "a")]:
        failures += 1
        print(f"FAIL use tree: {tree}")
    print("self-test: " + ("FAILED" if failures else "passed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
