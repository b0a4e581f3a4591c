#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The report of ./run.sh bench: waitvar-bench's JSON (one file per boot)
in, one table (table.txt, also printed), the merged JSON (bench.json), the
plots' data and a gnuplot script, and each plot as PNG and SVG out.

Every ratio is waitvar's cost over futex's, from medians of the same boot:
time over time, and for a rate futex's rate over waitvar's, so above 1 is
always "slower than futex".  The goals are checked here, from those ratios.

  bench-report.py --out DIR [--no-plots] FILE.json...
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

SCHEMA = "waitvar-bench 1"
GOAL_ROUNDTRIP = 1.15
GOAL_WAKEALL = 1.20
PLOTS = ("roundtrip", "wakeall", "collide", "filter", "scaling")


class ReportError(Exception):
    pass


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise ReportError(f"{path}: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}: not JSON: {e}") from e
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise ReportError(f"{path}: not a '{SCHEMA}' document")
    for key in ("label", "kernel", "machine", "cpus", "wait_table_size", "reps", "records"):
        if key not in doc:
            raise ReportError(f"{path}: no '{key}'")
    seen = set()
    for i, r in enumerate(doc["records"]):
        for key in ("figure", "impl", "params", "unit", "median", "samples"):
            if key not in r:
                raise ReportError(f"{path}: record {i} has no '{key}'")
        if not r["samples"] or len(r["samples"]) < 5:
            raise ReportError(f"{path}: record {i} ({r['figure']}, {r['impl']}) has "
                              f"{len(r['samples'])} samples; at least 5 are needed")
        if len(r["samples"]) != doc["reps"]:
            raise ReportError(f"{path}: record {i} ({r['figure']}, {r['impl']}) has "
                              f"{len(r['samples'])} samples, not the {doc['reps']} of 'reps'")
        key = (r["figure"], r["impl"], json.dumps(r["params"], sort_keys=True))
        if key in seen:
            raise ReportError(f"{path}: record {i} ({r['figure']}, {r['impl']}, "
                              f"{r['params']}) comes twice")
        seen.add(key)
    doc["path"] = path
    return doc


def find(doc, figure, impl, **params):
    """The one record matching, or None."""
    for r in doc["records"]:
        if r["figure"] == figure and r["impl"] == impl and \
                all(r["params"].get(k) == v for k, v in params.items()):
            return r
    return None


def get(doc, figure, impl, **params):
    """The one record matching; an error naming what is missing if none."""
    r = find(doc, figure, impl, **params)
    if r is None:
        where = ", ".join(f"{k} {v}" for k, v in params.items())
        raise ReportError(f"{doc['path']}: no {impl} record of '{figure}' for {where}")
    return r


def values(doc, figure, key):
    """The distinct values of params[key] in a figure, in record order."""
    seen = []
    for r in doc["records"]:
        if r["figure"] == figure and r["params"].get(key) not in seen:
            seen.append(r["params"].get(key))
    return seen


def ratio(num, den):
    return num["median"] / den["median"] if den["median"] else float("inf")


def rate(ns):
    """Events per second, one every @ns."""
    return f"{1e9 / ns:,.0f}" if ns else "inf"


def fmt_slope(x):
    return "n/a" if x is None else f"{x:.1f}"


def slope(points):
    """Least-squares slope of (x, y) points."""
    n = len(points)
    if n < 2:
        return None
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if not sxx:
        return None
    return sum((x - mx) * (y - my) for x, y in points) / sxx


class Report:
    def __init__(self, docs):
        self.docs = docs
        self.main = next((d for d in docs if any(
            r["figure"] != "scaling" for r in d["records"])), docs[0])
        self.lines = []
        self.goals = []
        self.data = {}  # file name -> text

    def out(self, line=""):
        self.lines.append(line)

    def goal(self, text, met, figure):
        self.goals.append((text, met, figure))

    def header(self):
        d = self.main
        self.out(f"waitvar-bench: kernel {d['kernel']} {d['machine']}, {d['cpus']} CPUs, "
                 f"{d['reps']} samples per figure (medians; ratio = waitvar / futex, "
                 f"above 1 is slower)")
        for doc in self.docs:
            self.out(f"  boot '{doc['label']}': wait table of {doc['wait_table_size']} "
                     f"queues, {len(doc['records'])} records ({doc['path']})")

    def roundtrip(self):
        d = self.main
        rows = []
        for cpus in values(d, "roundtrip", "cpus"):
            fut = get(d, "roundtrip", "futex", cpus=cpus)
            for impl in ("futex", "waitvar", "condvar"):
                r = find(d, "roundtrip", impl, cpus=cpus)
                if r is None and impl == "condvar":
                    continue
                r = get(d, "roundtrip", impl, cpus=cpus)
                q = ratio(r, fut)
                rows.append((cpus, impl, r["median"], q))
                # Unpinned, the placement the scheduler picks decides the
                # time: reported, not graded.
                if impl == "waitvar" and cpus != "unpinned":
                    self.goal(f"round trip (CPUs: {cpus}) <= {GOAL_ROUNDTRIP}x futex: {q:.2f}x",
                              q <= GOAL_ROUNDTRIP, "roundtrip")
        if not rows:
            return
        self.out()
        self.out("1. round trip (two threads hand a value back and forth)")
        self.out(f"   {'cpus':<10} {'impl':<8} {'ns/round trip':>14} {'x futex':>8}")
        for cpus, impl, ns, q in rows:
            self.out(f"   {cpus:<10} {impl:<8} {ns:>14,} {q:>8.2f}")
        dat = ["# cpus futex waitvar condvar (ns per round trip)"]
        for cpus in values(d, "roundtrip", "cpus"):
            cells = [find(d, "roundtrip", i, cpus=cpus) for i in ("futex", "waitvar", "condvar")]
            dat.append(f"{cpus} " + " ".join(str(c["median"]) if c else "NaN" for c in cells))
        self.data["roundtrip.dat"] = "\n".join(dat) + "\n"

    def wakeall(self):
        d = self.main
        ns = values(d, "wakeall", "n")
        if not ns:
            return
        self.out()
        self.out("2. wake-all: from the wake until all N waiters have returned "
                 "(SET vs FUTEX_WAKE(INT_MAX)); the waker's call alone")
        self.out(f"   {'N':>5} {'waitvar ns':>12} {'futex ns':>12} {'x futex':>8}"
                 f" {'call waitvar':>13} {'call futex':>11} {'x futex':>8}")
        dat = ["# n waitvar futex (ns until all returned)"]
        for n in ns:
            w, f = get(d, "wakeall", "waitvar", n=n), get(d, "wakeall", "futex", n=n)
            cw, cf = get(d, "wakeall_call", "waitvar", n=n), get(d, "wakeall_call", "futex", n=n)
            q = ratio(w, f)
            self.out(f"   {n:>5} {w['median']:>12,} {f['median']:>12,} {q:>8.2f}"
                     f" {cw['median']:>13,} {cf['median']:>11,} {ratio(cw, cf):>8.2f}")
            self.goal(f"wake-all of {n} <= {GOAL_WAKEALL}x futex: {q:.2f}x",
                      q <= GOAL_WAKEALL, "wakeall")
            dat.append(f"{n} {w['median']} {f['median']}")
        self.data["wakeall.dat"] = "\n".join(dat) + "\n"
        for n in values(d, "wakeone", "n"):
            w, f = get(d, "wakeone", "waitvar", n=n), get(d, "wakeone", "futex", n=n)
            q = ratio(w, f)
            self.out(f"   exclusive wake-one, {n} waiters woken one per call (WAKE vs "
                     f"FUTEX_WAKE(1)): waitvar {w['median']:,} ns/wake "
                     f"({rate(w['median'])}/s), futex {f['median']:,} ns/wake "
                     f"({rate(f['median'])}/s), {q:.2f}x")

    def collide(self):
        d = self.main
        ks = values(d, "collide", "k")
        if not ks:
            return
        self.out()
        self.out("3. bucket collisions: wake latency of one waiter with K waiters on other "
                 "variables of its bucket (futex: K waiters on other futexes)")
        self.out(f"   {'K':>5} {'waitvar ns':>12} {'futex ns':>12} {'x futex':>8}"
                 f" {'call waitvar':>13} {'call futex':>11}")
        dat = ["# k waitvar futex call_waitvar call_futex (ns)"]
        pts = {"waitvar": [], "futex": [], "call_waitvar": [], "call_futex": []}
        for k in ks:
            w, f = get(d, "collide", "waitvar", k=k), get(d, "collide", "futex", k=k)
            cw = get(d, "collide_call", "waitvar", k=k)
            cf = get(d, "collide_call", "futex", k=k)
            self.out(f"   {k:>5} {w['median']:>12,} {f['median']:>12,} {ratio(w, f):>8.2f}"
                     f" {cw['median']:>13,} {cf['median']:>11,}")
            dat.append(f"{k} {w['median']} {f['median']} {cw['median']} {cf['median']}")
            pts["waitvar"].append((k, w["median"]))
            pts["futex"].append((k, f["median"]))
            pts["call_waitvar"].append((k, cw["median"]))
            pts["call_futex"].append((k, cf["median"]))
        s = {key: slope(p) for key, p in pts.items()}
        self.collide_slopes = s
        self.out(f"   slope per colliding waiter: waitvar {fmt_slope(s['waitvar'])} ns "
                 f"(the waker's call {fmt_slope(s['call_waitvar'])} ns), futex anchor "
                 f"{fmt_slope(s['futex'])} ns (call {fmt_slope(s['call_futex'])} ns)")
        self.data["collide.dat"] = "\n".join(dat) + "\n"

    def filter(self):
        d = self.main
        ms = values(d, "filter", "m")
        if not ms:
            return
        self.out()
        self.out("4. filtered vs plain wake: M waiters on different conditions of one "
                 "variable, one of them satisfied")
        self.out(f"   {'M':>5} {'wake':<7} {'latency ns':>11} {'call ns':>9}"
                 f" {'spurious/wake':>14} {'x plain':>8}")
        dat = ["# m plain_ns filter_ns plain_spurious filter_spurious"]
        for m in ms:
            row = []
            plain = get(d, "filter", "plain", m=m)
            for mode in ("plain", "filter"):
                r = get(d, "filter", mode, m=m)
                c = get(d, "filter_call", mode, m=m)
                sp = get(d, "filter_spurious", mode, m=m)
                self.out(f"   {m:>5} {mode:<7} {r['median']:>11,} {c['median']:>9,}"
                         f" {sp['median']:>14,} {ratio(r, plain):>8.2f}")
                row.append((r["median"], sp["median"]))
                if mode == "filter":
                    worst = max(sp["samples"])
                    self.goal(f"spurious wakeups under FILTER with {m} waiters = 0: "
                              f"{worst} at most", worst == 0, "filter")
            dat.append(f"{m} {row[0][0]} {row[1][0]} {row[0][1]} {row[1][1]}")
        self.data["filter.dat"] = "\n".join(dat) + "\n"

    def scaling(self):
        boots = [d for d in self.docs if values(d, "scaling", "p")]
        if not boots:
            return
        self.out()
        self.out("5. scaling: round trips per second of P pairs, each on its own variable, "
                 "with K idle waiters on K other variables")
        self.out(f"   {'table':>6} {'K':>6} {'P':>2} {'waitvar/s':>11} {'futex/s':>11}"
                 f" {'x futex':>8}")
        self.scaling_boots = []
        self.scaling_ks = {}
        for d in boots:
            idx = len(self.scaling_boots)
            self.scaling_boots.append((idx, d["wait_table_size"], d["label"]))
            dat = [f"# boot {d['label']}, table {d['wait_table_size']}: "
                   "p then waitvar futex round trips/s for each k"]
            ks = values(d, "scaling", "k")
            self.scaling_ks[idx] = ks
            for p in values(d, "scaling", "p"):
                cols = []
                for k in ks:
                    w = get(d, "scaling", "waitvar", p=p, k=k)
                    f = get(d, "scaling", "futex", p=p, k=k)
                    self.out(f"   {d['wait_table_size']:>6} {k:>6} {p:>2} {w['median']:>11,}"
                             f" {f['median']:>11,} {ratio(f, w):>8.2f}")
                    cols += [str(w["median"]), str(f["median"])]
                dat.append(f"{p} " + " ".join(cols))
            self.data[f"scaling-{idx}.dat"] = "\n".join(dat) + "\n"
        # What the idle waiters cost each implementation, boot by boot: the
        # evidence for the table's size.
        self.out("   round trips lost to the most idle waiters (the largest K against K 0), "
                 "for each P:")
        for d in boots:
            ks = values(d, "scaling", "k")
            parts = []
            for impl in ("waitvar", "futex"):
                losses = []
                for p in values(d, "scaling", "p"):
                    base = get(d, "scaling", impl, p=p, k=ks[0])["median"]
                    most = get(d, "scaling", impl, p=p, k=ks[-1])["median"]
                    losses.append(100.0 * (base - most) / base if base else 0.0)
                med = statistics.median(losses)
                parts.append(f"{impl} {', '.join(f'{x:.0f}%' for x in losses)} "
                             f"(median {med:.0f}%)")
            self.out(f"   {d['wait_table_size']:>6} queues: " + "; ".join(parts))

    def goals_section(self):
        if not self.goals:
            return
        self.out()
        self.out("goals:")
        for text, met, _ in self.goals:
            self.out(f"   {'met   ' if met else 'MISSED'} {text}")

    def build(self):
        self.header()
        self.roundtrip()
        self.wakeall()
        self.collide()
        self.filter()
        self.scaling()
        self.goals_section()
        return "\n".join(self.lines) + "\n"

    def gnuplot(self, out_dir):
        """A gnuplot script drawing every plot whose data exists, PNG and SVG."""
        d = self.main
        title = f"{d['kernel']} {d['machine']}, {d['cpus']} CPUs (TCG: ratios, not hardware times)"
        plots = []
        if "roundtrip.dat" in self.data:
            plots.append(("roundtrip", f"""
set title "Round trip, median ns\\n{title}"
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set ylabel "ns per round trip"
set yrange [0:*]
plot 'roundtrip.dat' using 2:xtic(1) title 'futex', '' using 3 title 'waitvar', '' using 4 title 'condvar'
"""))
        if "wakeall.dat" in self.data:
            plots.append(("wakeall", f"""
set title "Wake-all: wake until all N have returned\\n{title}"
set logscale xy
set xlabel "waiters N"
set ylabel "ns"
plot 'wakeall.dat' using 1:2 with linespoints title 'waitvar SET', '' using 1:3 with linespoints title 'FUTEX_WAKE(INT_MAX)'
"""))
        if "collide.dat" in self.data:
            s = self.collide_slopes
            plots.append(("collide", f"""
set title "One wake with K waiters in the same bucket\\n{title}"
set xlabel "colliding waiters K (futex: waiters on other futexes)"
set ylabel "ns"
set yrange [0:*]
set key top left
plot 'collide.dat' using 1:2 with linespoints title 'waitvar: until the waiter returned, {fmt_slope(s['waitvar'])} ns per waiter', '' using 1:3 with linespoints title 'futex: until the waiter returned, {fmt_slope(s['futex'])} ns per waiter', '' using 1:4 with linespoints title 'waitvar: the SET call, {fmt_slope(s['call_waitvar'])} ns per waiter', '' using 1:5 with linespoints title 'futex: the FUTEX_WAKE call, {fmt_slope(s['call_futex'])} ns per waiter'
"""))
        if "filter.dat" in self.data:
            plots.append(("filter", f"""
set title "Plain vs filtered wake, one of M satisfied\\n{title}"
set multiplot layout 1,2
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set yrange [0:*]
set ylabel "ns until the satisfied waiter returned"
plot 'filter.dat' using 2:xtic(1) title 'plain SET', '' using 3 title 'WAKE_NR FILTER'
set ylabel "spurious wakeups per wake"
plot 'filter.dat' using 4:xtic(1) title 'plain SET', '' using 5 title 'WAKE_NR FILTER'
unset multiplot
""", 1100))
        if getattr(self, "scaling_boots", None):
            n = len(self.scaling_boots)
            body = [f'set multiplot layout 1,{n} title "Scaling: P pairs with K idle waiters\\n{title}"',
                    "set xlabel 'pairs P'", "set ylabel 'round trips/s'", "set yrange [0:*]",
                    "set key below"]
            for idx, size, label in self.scaling_boots:
                terms = []
                for j, k in enumerate(self.scaling_ks[idx]):
                    terms.append(f"'scaling-{idx}.dat' using 1:{2 + 2 * j} with linespoints "
                                 f"lt {j + 1} title 'waitvar K={k}'")
                    terms.append(f"'' using 1:{3 + 2 * j} with linespoints lt {j + 1} dt 2 "
                                 f"title 'futex K={k}'")
                body.append(f"set title '{size} queues ({label})'")
                body.append("plot " + ", ".join(terms))
            body.append("unset multiplot")
            plots.append(("scaling", "\n" + "\n".join(body) + "\n", 600 * n, 650))
        script = [f"# Made by harness/bench-report.py; run in {out_dir}"]
        for plot in plots:
            name, body = plot[0], plot[1]
            width = plot[2] if len(plot) > 2 else 800
            height = plot[3] if len(plot) > 3 else 500
            for term, ext in (("pngcairo", "png"), ("svg", "svg")):
                script.append(f"reset\nset terminal {term} size {width},{height} noenhanced\n"
                              f"set output '{name}.{ext}'" + body)
        return "\n".join(script) + "\nset output\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for the table, JSON and plots")
    ap.add_argument("--no-plots", action="store_true", help="write the gnuplot script, draw nothing")
    ap.add_argument("json", nargs="+", help="waitvar-bench --json output, one per boot")
    args = ap.parse_args(argv)
    try:
        docs = [load(p) for p in args.json]
        if not os.path.isdir(args.out):
            raise ReportError(f"--out {args.out}: not a folder")
        rep = Report(docs)
        table = rep.build()
        gp = rep.gnuplot(args.out)
    except ReportError as e:
        print(f"bench-report: {e}", file=sys.stderr)
        return 1
    with open(os.path.join(args.out, "table.txt"), "w", encoding="utf-8") as f:
        f.write(table)
    with open(os.path.join(args.out, "bench.json"), "w", encoding="utf-8") as f:
        json.dump({"schema": SCHEMA + " report", "boots": [
            {k: v for k, v in d.items() if k != "path"} for d in docs],
            "goals": [{"goal": t, "met": m, "figure": fig} for t, m, fig in rep.goals]},
            f, indent=1)
        f.write("\n")
    for name, text in rep.data.items():
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            f.write(text)
    with open(os.path.join(args.out, "plots.gp"), "w", encoding="utf-8") as f:
        f.write(gp)
    sys.stdout.write(table)
    if args.no_plots:
        return 0
    if not shutil.which("gnuplot"):
        print("bench-report: no gnuplot (Debian package gnuplot-nox): plots not drawn",
              file=sys.stderr)
        return 1
    res = subprocess.run(["gnuplot", "plots.gp"], cwd=args.out, capture_output=True, text=True)
    if res.returncode:
        print(f"bench-report: gnuplot failed on {args.out}/plots.gp:\n{res.stderr}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
