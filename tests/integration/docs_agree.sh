#!/usr/bin/env bash
# The docs agree with the program. Everything is derived from the program's
# own --help output, so the test stays right when commands or flags are
# added: every command of `lockblame --help`, and every flag and --format
# value of `lockblame COMMAND --help`, must be documented
#   - in the man page (docs/lockblame.1): in the command's SYNOPSIS line and
#     its COMMANDS section; and no flag may be documented there that the
#     command does not take;
#   - in README.md's command-line block (one synopsis per command);
#   - in `lockblame --help`'s synopsis of the command (the flags of the
#     command's usage line).
# Also: the schema version the man page names is docs/SCHEMA.md's.
source "$(dirname "$0")/../lib/common.sh"
need "$LOCKBLAME_CLI"
"$LOCKBLAME_CLI" --help >"$tmp/main.help"
commands=$(awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }' "$tmp/main.help")
[ -n "$commands" ] || fail "no commands in lockblame --help"
for c in $commands; do
    "$LOCKBLAME_CLI" "$c" --help >"$tmp/$c.help" || fail "lockblame $c --help exited $?"
done
python3 - "$tmp" "$ROOT" $commands <<'PY'
import re, sys
tmp, root, commands = sys.argv[1], sys.argv[2], sys.argv[3:]
FLAG = re.compile(r"(?<![\w-])(--?[a-zA-Z][\w-]*)")
bad = []

def flags(text):
    return set(FLAG.findall(text))

def unroff(s):
    s = re.sub(r"\\f[BIRP]", "", s).replace("\\-", "-").replace("\\(em", "-")
    s = re.sub(r"^\.(B|I|BR|RB|BI|IB|IR|RI)\s+", "", s, flags=re.M)
    return s.replace('"', "")

main = open(tmp + "/main.help").read()
man_src = open(root + "/docs/lockblame.1").read()
man = unroff(man_src)
# man SYNOPSIS: ".B lockblame CMD" up to the next .br/.SH; sections: ".SS CMD" to the next .SS/.SH
synopsis = man_src.split("\n.SH SYNOPSIS\n", 1)[-1].split("\n.SH ", 1)[0] + "\n.br\n"
syn = {m.group(1): unroff(m.group(2)) for m in
       re.finditer(r"^\.B lockblame (\w+)\n(.*?)(?=^\.br)", synopsis, re.M | re.S)}
sec = {m.group(1): unroff(m.group(2)) for m in
       re.finditer(r"^\.SS (\w+)\n(.*?)(?=^\.SS|^\.SH)", man_src, re.M | re.S)}
readme = open(root + "/README.md").read()
block = re.search(r"```\n(lockblame run .*?)```", readme, re.S)
readme_syn = {}
if not block:
    bad.append("README.md: no command-line block starting with 'lockblame run'")
else:
    cur = None
    for line in block.group(1).splitlines():
        m = re.match(r"lockblame (\w+)(.*)", line)
        if m:
            cur = m.group(1)
            readme_syn[cur] = m.group(2)
        elif cur:
            readme_syn[cur] += line

# lockblame --help: each command's entry, up to the next command line
entries, cur = {}, None
for line in main.split("commands:", 1)[1].splitlines():
    m = re.match(r"  ([a-z]+)(\s|$)", line)
    if m and m.group(1) in commands:
        cur = m.group(1)
        entries[cur] = line
    elif cur and line.startswith("   "):
        entries[cur] += "\n" + line
    elif not line.strip():
        cur = None

for c in commands:
    h = open("%s/%s.help" % (tmp, c)).read()
    usage = h.split("\n\n", 1)[0]
    # option groups: "-a, --all", "--metric M", "-n N", views; -h/--help is implied
    groups = []
    for line in h.splitlines():
        m = re.match(r"\s+(--?[a-zA-Z][\w-]*)(?:, (--?[a-zA-Z][\w-]*))?", line)
        if m:
            groups.append({g for g in m.groups() if g})
    for f in flags(usage):
        if not any(f in g for g in groups):
            groups.append({f})
    groups = [g for g in groups if not g & {"-h", "--help"}]
    known = set().union(*groups) | {"-h", "--help"}
    fm = re.search(r"--format ([a-z|]+)", usage)
    formats = fm.group(1).split("|") if fm and "|" in fm.group(1) else []
    print("%s: flags %s; formats %s" % (c, sorted(known - {"-h", "--help"}), formats))
    places = {"lockblame --help": entries.get(c), "man SYNOPSIS": syn.get(c),
              "man section": sec.get(c), "README block": readme_syn.get(c)}
    for where, text in places.items():
        if text is None:
            bad.append("%s: %s is not documented" % (where, c))
            continue
        # lockblame --help mirrors each command's usage line; the rest list every option
        need = [g for g in groups if g & flags(usage)] if where == "lockblame --help" else groups
        for g in need:
            if not g & flags(text):
                bad.append("%s of %s lacks %s" % (where, c, "/".join(sorted(g))))
        if where != "man section":  # sections may mention other commands' flags in prose
            for f in flags(text) - known:
                bad.append("%s of %s documents %s, which '%s --help' does not know" % (where, c, f, c))
        for fmt in formats:
            if not re.search(r"(?<![\w-])%s(?![\w-])" % fmt, text):
                bad.append("%s of %s lacks --format %s" % (where, c, fmt))
    # man .TP items of this section name only flags the command takes
    s = sec.get(c, "")
    for m in re.finditer(r"^\.TP\n(.*)$", man_src.split(".SS " + c + "\n", 1)[-1].split("\n.SS ", 1)[0].split("\n.SH ", 1)[0], re.M):
        for f in flags(unroff(m.group(1)).split(" ")[0]):
            if f not in known:
                bad.append("man section %s: .TP item %s is not an option of '%s --help'" % (c, f, c))

schema = re.search(r"schema \(version (\d+)\)", open(root + "/docs/SCHEMA.md").read())
for v in re.findall(r"schema version above (\d+)|schema \(version (\d+)\)", man):
    n = v[0] or v[1]
    if schema and n != schema.group(1):
        bad.append("man page names schema version %s, docs/SCHEMA.md %s" % (n, schema.group(1)))
if not schema:
    bad.append("docs/SCHEMA.md names no schema version")
for b in bad:
    print("MISMATCH:", b)
sys.exit(1 if bad else 0)
PY
