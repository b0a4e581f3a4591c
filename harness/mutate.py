#!/usr/bin/env python3
"""The catalogue of mutants (tests/mutants/README.md) and the table of a run.

  mutate.py list CATALOGUE...            names, one a line (CATALOGUE: a folder of *.mut)
  mutate.py show MUT                     its fields, as shell words (file, suites, equivalent)
  mutate.py apply MUT SRCDIR [K]         plant it in SRCDIR (a copy); exit 3 if stale.  K:
                                         its number behind the selector (a mutant whose
                                         replacement says WAIT_MUTANT must have one)
  mutate.py check MUT SRCDIR SUITES      stale or malformed? (nothing written); exit 3 if so
  mutate.py killer VERDICT_OUT RC        what killed it, from ktap-verdict.sh's output and
                                         status, or SURVIVED
  mutate.py table ROWS                   the table of a run; ROWS: name<TAB>result<TAB>seconds
                                         (result: killed by X, SURVIVED, equivalent: R, stale: R)

Exit: 0 done, 2 usage or a malformed catalogue entry, 3 stale, 1 (table) a
mutant survived or went stale.
"""
import os
import re
import shlex
import sys

NAME_RE = re.compile(r'^[a-z0-9][a-z0-9-]*$')
EX_STALE = 3
# In a replacement: true when the kernel booted with wait_mutant=K, this
# mutant's number (tests/mutants/README.md: series mutants).
SELECTOR = 'WAIT_MUTANT'
# A suite name that stands for the KUnit modules, for series mutants.
KUNIT_SUITE = 'kunit'


class Malformed(Exception):
    pass


def parse(path):
    """A .mut file as a dict; Malformed says what is wrong with it."""
    name = os.path.basename(path)
    if not name.endswith('.mut') or not NAME_RE.match(name[:-4]):
        raise Malformed(f'{path}: a mutant is NAME.mut, NAME of a-z, 0-9 and -')
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    m = {'name': name[:-4], 'path': path, 'desc': '', 'file': None, 'suites': [],
         'equivalent': None}
    section = None
    find, replace = [], []
    for no, line in enumerate(lines, 1):
        if line == '@@ find':
            if section is not None:
                raise Malformed(f'{path}:{no}: a second "@@ find"')
            section = 'find'
            continue
        if line == '@@ replace':
            if section != 'find':
                raise Malformed(f'{path}:{no}: "@@ replace" before "@@ find"')
            section = 'replace'
            continue
        if section == 'find':
            find.append(line)
        elif section == 'replace':
            replace.append(line)
        elif line.startswith('#'):
            m['desc'] = m['desc'] or line.lstrip('# ').strip()
        elif line.strip() == '':
            continue
        else:
            key, sep, value = line.partition(':')
            value = value.strip()
            if not sep or key not in ('file', 'suites', 'equivalent') or not value:
                raise Malformed(f'{path}:{no}: expected "file:", "suites:" or "equivalent:", '
                                f'not "{line}"')
            if key == 'suites':
                m['suites'] = value.split()
            else:
                m[key] = value
    if section != 'replace':
        raise Malformed(f'{path}: no "@@ find" and "@@ replace" sections')
    if not find or not ''.join(find).strip():
        raise Malformed(f'{path}: the find text is empty')
    if m['file'] is None or m['file'].startswith('/') or '..' in m['file'].split('/'):
        raise Malformed(f'{path}: "file:" names a file under the source folder')
    if not m['desc']:
        raise Malformed(f'{path}: no "# ..." line saying what it breaks')
    if bool(m['suites']) == bool(m['equivalent']):
        raise Malformed(f'{path}: give either "suites:" or "equivalent: REASON"')
    while replace and replace[-1].strip() == '':
        replace.pop()
    m['find'] = '\n'.join(find) + '\n'
    m['replace'] = '\n'.join(replace) + ('\n' if replace else '')
    m['selected'] = SELECTOR in m['replace']
    if SELECTOR in m['find']:
        raise Malformed(f'{path}: {SELECTOR} belongs in the replacement, not the find text')
    if m['find'] == m['replace']:
        raise Malformed(f'{path}: the replacement is the find text: nothing is mutated')
    return m


def catalogue(folders):
    """Every mutant of the folders, sorted by name; names are unique."""
    muts, seen = [], {}
    for folder in folders:
        if not os.path.isdir(folder):
            raise Malformed(f'{folder}: no such catalogue folder')
        for entry in sorted(os.listdir(folder)):
            if entry.endswith('.mut'):
                m = parse(os.path.join(folder, entry))
                if m['name'] in seen:
                    raise Malformed(f'{m["path"]}: the name is also {seen[m["name"]]}')
                seen[m['name']] = m['path']
                muts.append(m)
    return sorted(muts, key=lambda m: m['name'])


def stale_reason(m, srcdir):
    """Why M no longer applies to SRCDIR, or None."""
    target = os.path.join(srcdir, m['file'])
    if not os.path.isfile(target):
        return f'{m["file"]} is gone'
    with open(target, encoding='utf-8') as f:
        text = f.read()
    n = text.count(m['find'])
    if n == 0:
        return f'its text is no longer in {m["file"]}'
    if n > 1:
        return f'its text occurs {n} times in {m["file"]}'
    return None


def apply(m, srcdir, number=None):
    """Plants M; a selected mutant as its NUMBER behind the selector."""
    if m['selected'] != (number is not None):
        raise Malformed(f'{m["path"]}: ' + ('says ' + SELECTOR + ': give its number'
                                             if m['selected'] else
                                             'has no ' + SELECTOR + ' to number'))
    reason = stale_reason(m, srcdir)
    if reason:
        return reason
    replace = m['replace']
    if number is not None:
        replace = replace.replace(SELECTOR, f'(wait_mutant == {number})')
    target = os.path.join(srcdir, m['file'])
    with open(target, encoding='utf-8') as f:
        text = f.read()
    with open(target, 'w', encoding='utf-8') as f:
        f.write(text.replace(m['find'], replace, 1))
    return None


def killer(verdict_text, rc):
    """The first test that failed, else what the status says; SURVIVED on 0."""
    for line in verdict_text.splitlines():
        mo = re.match(r'^failed: (?:not ok) \d+ (.*?)(?: # .*)?$', line.strip())
        if mo:
            return mo.group(1).strip() or 'a test'
    if rc == 0:
        return None
    lines = verdict_text.splitlines()
    if rc == 3:
        for i, line in enumerate(lines):
            if line.startswith('kernel splat in the guest log:') and i + 1 < len(lines):
                return 'splat: ' + re.sub(r'^\[ *[0-9.]+\] ', '', lines[i + 1].strip())[:60]
        return 'splat'
    if rc == 2:
        return 'timeout'
    if rc == 1:
        for line in lines:
            if line and not line.startswith(('KTAP:', 'logs:')) and not re.match(r'^\d+ ', line):
                return line.strip()[:70]
        return 'short KTAP'
    return f'harness error (status {rc})'


def table(rows):
    """The run's table and its last line; returns (text, ok)."""
    width = max([len('mutant')] + [len(row[0]) for row in rows])
    out = [f'{"mutant":<{width}} {"result":<56} {"time":>6}']
    counts = {'killed': 0, 'survived': 0, 'equivalent': 0, 'stale': 0}
    for row in rows:
        name, result, secs = row
        if result.startswith('killed by '):
            counts['killed'] += 1
            shown = result[len('killed by '):]
        elif result == 'SURVIVED':
            counts['survived'] += 1
            shown = 'SURVIVED'
        elif result.startswith('equivalent: '):
            counts['equivalent'] += 1
            shown = result
        elif result.startswith('stale: '):
            counts['stale'] += 1
            shown = 'STALE (' + result[len('stale: '):] + ')'
        else:
            raise Malformed(f'row of {name}: unknown result "{result}"')
        if len(shown) > 56:
            shown = shown[:53] + '...'
        out.append(f'{name:<{width}} {shown:<56} {secs + "s":>6}')
    out.append(f'mutants: {counts["killed"]} killed, {counts["survived"]} survived, '
               f'{counts["equivalent"]} equivalent, {counts["stale"]} stale')
    return '\n'.join(out) + '\n', counts['survived'] == 0 and counts['stale'] == 0


def read_rows(path):
    rows = []
    with open(path, encoding='utf-8') as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if not line:
                continue
            parts = line.split('\t')
            if len(parts) != 3 or not parts[2].isdigit():
                raise Malformed(f'{path}:{no}: expected name<TAB>result<TAB>seconds')
            rows.append(parts)
    return rows


def usage():
    sys.stderr.write(__doc__)
    sys.exit(2)


def main(argv):
    if len(argv) < 2:
        usage()
    cmd, args = argv[1], argv[2:]
    try:
        if cmd == 'list' and args:
            for m in catalogue(args):
                print(m['name'])
        elif cmd == 'show' and len(args) == 1:
            m = parse(args[0])
            print(f'MUT_FILE={shlex.quote(m["file"])}')
            print(f'MUT_SUITES={shlex.quote(",".join(m["suites"]))}')
            print(f'MUT_EQUIVALENT={shlex.quote(m["equivalent"] or "")}')
            print(f'MUT_DESC={shlex.quote(m["desc"])}')
            print(f'MUT_SELECTED={int(m["selected"])}')
        elif cmd in ('apply', 'check') and len(args) in (2, 3):
            m = parse(args[0])
            number = None
            if cmd == 'check' and len(args) == 3:
                with open(args[2], encoding='utf-8') as f:
                    known = {ln.strip() for ln in f if ln.strip() and not ln.startswith('#')}
                known.add(KUNIT_SUITE)
                bad = [s for s in m['suites'] if s not in known]
                if bad:
                    raise Malformed(f'{m["path"]}: no suite {" ".join(bad)} in {args[2]}')
            elif cmd == 'apply' and len(args) == 3:
                if not args[2].isdigit() or int(args[2]) < 1:
                    raise Malformed(f'apply: the number is 1 or more, not "{args[2]}"')
                number = int(args[2])
            reason = stale_reason(m, args[1]) if cmd == 'check' else apply(m, args[1], number)
            if reason:
                print(f'stale: {reason}')
                return EX_STALE
        elif cmd == 'killer' and len(args) == 2:
            with open(args[0], encoding='utf-8', errors='replace') as f:
                k = killer(f.read(), int(args[1]))
            print(f'killed by {k}' if k else 'SURVIVED')
        elif cmd == 'table' and len(args) == 1:
            text, ok = table(read_rows(args[0]))
            sys.stdout.write(text)
            return 0 if ok else 1
        else:
            usage()
    except Malformed as e:
        print(f'mutate.py: {e}', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
