#!/usr/bin/env python3
"""Citations of docs/DESIGN.md resolve, and the tree speaks in the present
tense. Usage: check_docs_rules.py ROOT [FILE ...] (FILEs relative to ROOT;
default: the files git tracks under src/, tests/, docs/ and README.md).
Prints one line per problem and exits 1 if there is any.

Checks:
  - every "docs/DESIGN.md rule N" (also "rules N, M", "rules N-M",
    "rules N and M") in src/, tests/ and README.md names a rule that
    docs/DESIGN.md defines under a "### Rule N: ..." heading, and every
    'docs/DESIGN.md "Section"' names one of its headings; a citation may
    run over two comment lines;
  - DESIGN.md is spelled docs/DESIGN.md there (DESIGN.md alone inside docs/);
  - no "session N", "issue N" or ISO date (YYYY-MM) in src/, tests/, docs/
    or README.md: history belongs to git. Dates are allowed in
    docs/PERFORMANCE.md's figures tables (lines starting with "|") and
    code blocks, and as quoted data (a full date in quotes given to a command)."""
import os
import re
import subprocess
import sys

SELF = {"tests/lib/check_docs_rules.py", "tests/integration/docs_rules.sh"}
# A comment line break inside a citation: newline, indentation, a comment
# leader of C, shell or Python.
BREAK = r"(?:[ \t]*\n[ \t]*(?:\*|#|//)?)?[ \t]*"
CITE = re.compile(r"(?P<path>(?:docs/)?)DESIGN(?P<md>\.md)?(?:'s)?" + BREAK +
                  r"(?:(?P<kw>rules?)" + BREAK +
                  r"(?P<nums>\d+(?:" + BREAK + r"(?:-|,|and)" + BREAK + r"\d+)*)"
                  r"|(?P<q>\"(?P<sec>[^\"\n]*(?:\n[ \t]*(?:\*|#|//)?[ \t]*[^\"\n]*)?)\"))?")
HISTORY = [
    (re.compile(r"\b[Ss]ession [0-9]"), "a session number"),
    (re.compile(r"\b[Ii]ssue [0-9]"), "an issue number"),
]
DATE = re.compile(r"\b20[0-9][0-9]-[01][0-9]")
DATE_LITERAL = re.compile(r"(['\"])20[0-9]{2}-[01][0-9]-[0-3][0-9]\1")


def tree_files(root):
    out = subprocess.run(["git", "ls-files", "--", "src", "tests", "docs", "README.md"], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    return [f for f in out.split("\n") if f]


def design(root):
    text = open(os.path.join(root, "docs/DESIGN.md"), encoding="utf-8").read()
    rules = {int(m.group(1)) for m in re.finditer(r"^### Rule (\d+):", text, re.M)}
    headings = {m.group(1).strip() for m in re.finditer(r"^#+ (.*)$", text, re.M)}
    return rules, headings


def numbers(s):
    out, prev_dash = [], False
    for tok in re.findall(r"\d+|-", s):
        if tok == "-":
            prev_dash = True
            continue
        n = int(tok)
        if prev_dash and out:
            out.extend(range(out[-1] + 1, n + 1))
        else:
            out.append(n)
        prev_dash = False
    return out


def unbreak(s):
    return re.sub(r"\s*\n[ \t]*(?:\*|#|//)?[ \t]*", " ", s)


def check(root, files):
    rules, headings = design(root)
    problems = []
    if not rules:
        problems.append("docs/DESIGN.md: no '### Rule N:' headings")
    for f in files:
        if f in SELF:
            continue
        path = os.path.join(root, f)
        if not os.path.isfile(path):
            continue
        try:
            text = open(path, encoding="utf-8").read()
        except UnicodeDecodeError:
            continue
        in_docs = f.startswith("docs/")

        def where(pos):
            return "%s:%d" % (f, text.count("\n", 0, pos) + 1)

        if f.startswith(("src/", "tests/")) or f == "README.md" or in_docs:
            for m in CITE.finditer(text):
                if not m.group("md") and not m.group("kw") and not m.group("q"):
                    continue  # the word DESIGN alone (e.g. "DESIGN header")
                if not m.group("md") or (not m.group("path") and not in_docs):
                    problems.append("%s: cite it as docs/DESIGN.md: %r" %
                                    (where(m.start()), unbreak(m.group(0))))
                if m.group("nums"):
                    for n in numbers(m.group("nums")):
                        if n not in rules:
                            problems.append("%s: docs/DESIGN.md has no rule %d" %
                                            (where(m.start()), n))
                elif m.group("q"):
                    sec = unbreak(m.group("sec")).strip()
                    if sec not in headings:
                        problems.append("%s: docs/DESIGN.md has no section %r" %
                                        (where(m.start()), sec))
        fenced = False
        for i, line in enumerate(text.split("\n"), 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
            for rx, what in HISTORY:
                if rx.search(line):
                    problems.append("%s:%d: %s (history belongs to git): %s" %
                                    (f, i, what, line.strip()))
            dated = DATE.search(DATE_LITERAL.sub("", line))
            figures = f == "docs/PERFORMANCE.md" and (line.lstrip().startswith("|") or fenced)
            if dated and not figures:
                problems.append("%s:%d: a date (history belongs to git): %s" % (f, i, line.strip()))
    return problems


def main():
    root = sys.argv[1]
    files = sys.argv[2:] or tree_files(root)
    problems = check(root, files)
    for p in problems:
        print(p)
    if not problems:
        rules, headings = design(root)
        print("%d files checked; docs/DESIGN.md rules %s" %
              (len(files), ", ".join(map(str, sorted(rules)))))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
