#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Render the benchmark's raw results into docs/bench.

    render.py OUT_DIR DOC_DIR

OUT_DIR holds what userspace/bench/run_guest.sh wrote in the guest
(bench.jsonl, guest.json); DOC_DIR receives results.md, the PNG plots
(gnuplot) and a copy of the raw results (raw/).  Medians over the
repetitions, with min-max ranges; the DESIGN.md section 4 targets are
judged PASS or MISS from the medians.  Standard library only.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

LIBS = ["libev", "libevent", "libuv"]
CONTENDERS = ["twheel", "inproc", "timerfd", "scan"] + LIBS
# one call per touched id, the bench's clock read once per 1024: no batch
PER_ID = ["timerfd", "scan"] + LIBS
# user memory only
USER = ["inproc", "scan"] + LIBS
LABEL = {
    "twheel": "twheel (/dev/twheel)",
    "inproc": "in-process wheel",
    "timerfd": "timerfd + epoll",
    "scan": "map + scan",
    "uring": "twheel through io_uring",
    "sqpoll": "twheel through io_uring, SQPOLL",
    "libev": "libev",
    "libevent": "libevent",
    "libuv": "libuv",
}
COLOR = {"twheel": "#1f77b4", "inproc": "#2ca02c", "timerfd": "#d62728",
         "scan": "#ff7f0e", "uring": "#9467bd", "sqpoll": "#8c564b",
         "libev": "#e377c2", "libevent": "#7f7f7f", "libuv": "#17becf"}


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    print("render: skipping a malformed line: " + line[:80],
                          file=sys.stderr)
    return rows


class Agg:
    """Median and range of one metric over repetitions."""

    def __init__(self, values):
        self.v = sorted(values)

    def __bool__(self):
        return bool(self.v)

    @property
    def med(self):
        return statistics.median(self.v) if self.v else None

    @property
    def lo(self):
        return self.v[0] if self.v else None

    @property
    def hi(self):
        return self.v[-1] if self.v else None


def pick(rows, workload, contender=None, n=None, tag=None, **match):
    """Rows of a workload; tagged runs (e.g. memcg) only when asked for."""
    out = []
    for r in rows:
        if r.get("workload") != workload or r.get("tag") != tag:
            continue
        if contender is not None and r.get("contender") != contender:
            continue
        if n is not None and r.get("n") != n:
            continue
        if any(r.get(k) != v for k, v in match.items()):
            continue
        out.append(r)
    return out


def paired(rows, n, num_sel, den_sel, tag=None):
    """Ratios num/den of two touch series, round by round of the same run.

    num_sel, den_sel: (contender, batch or None).  Touch runs hold every
    contender in one process and interleave them round by round, so the
    ratio of two series in the same round sees the same outside noise.
    """
    out = []
    reps = sorted({r.get("rep") for r in pick(rows, "touch", n=n, tag=tag)})
    for rep in reps:
        def series(sel):
            c, b = sel
            m = {"batch": b} if b else {}
            r = pick(rows, "touch", c, n, tag=tag, rep=rep, **m)
            return r[0].get("rounds_ns") if r else None
        a, b = series(num_sel), series(den_sel)
        if a and b and len(a) == len(b):
            out += [x / y for x, y in zip(a, b) if y > 0]
    return Agg(out)


def agg(rows, key):
    return Agg([r[key] for r in rows if isinstance(r.get(key), (int, float))])


def fmt(x, digits=3):
    """A number with about @digits significant digits, no exponent."""
    if x is None:
        return "–"
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 10 ** digits:
        return "{:,.0f}".format(x)
    for d in range(digits):
        if a >= 10 ** (digits - 1 - d):
            return "{:.{}f}".format(x, d)
    return "{:.{}g}".format(x, digits)


def cell(a, digits=3, scale=1.0):
    """median [min–max] of an Agg, or the single value."""
    if not a:
        return "–"
    m = fmt(a.med * scale, digits)
    if len(a.v) == 1 or a.lo == a.hi:
        return m
    return "{} [{}–{}]".format(m, fmt(a.lo * scale, digits),
                               fmt(a.hi * scale, digits))


def nfmt(n):
    if n >= 1000000 and n % 1000000 == 0:
        return "{}M".format(n // 1000000)
    if n >= 1000 and n % 1000 == 0:
        return "{}K".format(n // 1000)
    return str(n)


def sizes(rows, workload, contender=None):
    return sorted({r["n"] for r in pick(rows, workload, contender)})


def verdict(ok, stretch=None):
    if ok is None:
        return "n/a"
    if not ok:
        return "**MISS**"
    return "**PASS** (stretch met)" if stretch else "**PASS**"


class Doc:
    def __init__(self):
        self.lines = []

    def p(self, s=""):
        self.lines.append(s)

    def table(self, head, rows):
        self.p("| " + " | ".join(head) + " |")
        self.p("|" + "|".join("---" for _ in head) + "|")
        for r in rows:
            self.p("| " + " | ".join(str(c) for c in r) + " |")
        self.p()


# ---------------------------------------------------------------- gnuplot

def gnuplot(script, workdir):
    subprocess.run(["gnuplot"], input=script, text=True, cwd=workdir,
                   check=True)


def q(s):
    return "'" + s.replace("'", "''") + "'"


def y_and_note(logy, note):
    """Both plots' commands for a log y axis and for a note under the title."""
    cmds = []
    if logy:
        cmds += ["set logscale y 10", "set format y '%.0s%c'"]
    if note:
        cmds += ["set tmargin 5", "set title offset 0,1",
                 "set label 1 " + q(note) +
                 " at screen 0.5, screen 0.915 center font ',9' noenhanced"]
    return cmds


def line_plot(path, title, xlabel, ylabel, series, workdir, logy=True,
              note=None):
    """series: [(label, color, [(x, med, lo, hi)...])]"""
    series = [s for s in series if s[2]]
    if not series:
        return False
    cmds = [
        "set terminal pngcairo size 900,640 font 'DejaVu Sans,11'",
        "set output " + q(path),
        "set title " + q(title),
        "set xlabel " + q(xlabel),
        "set ylabel " + q(ylabel),
        "set logscale x 10",
        "set grid xtics ytics mytics",
        "set key below maxrows 4 width -2",
    ]
    cmds += y_and_note(logy, note)
    xs = sorted({p[0] for s in series for p in s[2]})
    cmds.append("set xrange [{}:{}]".format(xs[0] / 1.6, xs[-1] * 1.6))
    cmds.append("set xtics (" + ", ".join('"{}" {}'.format(nfmt(x), x)
                                          for x in xs) + ")")
    plots = []
    for i, (label, color, pts) in enumerate(series):
        dat = "s{}.dat".format(i)
        with open(os.path.join(workdir, dat), "w") as f:
            for x, m, lo, hi in sorted(pts):
                f.write("{} {} {} {}\n".format(x, m, lo, hi))
        plots.append("{} using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 "
                     "lc rgb {} title {}".format(q(dat), q(color), q(label)))
    cmds.append("plot " + ", \\\n  ".join(plots))
    gnuplot("\n".join(cmds) + "\n", workdir)
    return True


def bar_plot(path, title, ylabel, groups, names, colors, workdir, logy=False,
             note=None):
    """groups: [(xtic, [(med, lo, hi) or None per name])]"""
    groups = [g for g in groups if any(v for v in g[1])]
    if not groups:
        return False
    dat = os.path.join(workdir, "bars.dat")
    with open(dat, "w") as f:
        for xtic, vals in groups:
            cols = []
            for v in vals:
                cols += ["{} {} {}".format(*v) if v else "NaN NaN NaN"]
            f.write('"{}" {}\n'.format(xtic, " ".join(cols)))
    cmds = [
        # room for the labels under the groups (190 px each)
        "set terminal pngcairo size {},560 font 'DejaVu Sans,11'".format(
            max(900, 190 * len(groups))),
        "set output " + q(path),
        "set title " + q(title),
        "set ylabel " + q(ylabel),
        "set style data histogram",
        "set style histogram errorbars gap 1 lw 1",
        "set style fill solid 0.85 border -1",
        "set grid ytics",
        "set key below",
        "set yrange [{}:*]".format("*" if logy else "0"),
    ]
    cmds += y_and_note(logy, note)
    plots = []
    for i, name in enumerate(names):
        c = 2 + 3 * i
        plots.append("'bars.dat' using {}:{}:{}{} lc rgb {} title {}".format(
            c, c + 1, c + 2, ":xtic(1)" if i == 0 else "", q(colors[i]),
            q(name)))
    cmds.append("plot " + ", ".join(plots))
    gnuplot("\n".join(cmds) + "\n", workdir)
    return True


def pts(rows, workload, contender, key, scale=1.0, **match):
    out = []
    for n in sizes(rows, workload, contender):
        a = agg(pick(rows, workload, contender, n, **match), key)
        if a and a.med is not None and a.med > 0:
            out.append((n, a.med * scale, a.lo * scale, a.hi * scale))
    return out


# ---------------------------------------------------------------- report

def git_desc(top):
    try:
        rev = subprocess.run(["git", "-C", top, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", top, "status", "--porcelain",
                                "--", "kmod", "uapi", "userspace/bench"],
                               capture_output=True, text=True).stdout.strip()
        return rev + (" + uncommitted changes" if dirty else "")
    except OSError:
        return "unknown"


def targets(d, rows, guest):
    d.p("## DESIGN.md §4 targets")
    d.p()
    d.p("Medians over the repetitions.  The touch ratios are paired: the "
        "contenders run side by side in one process, interleaved in short "
        "rounds, and each ratio is taken within a round (median [min–max] "
        "over all rounds of all repetitions), so that the shared host's "
        "noise, which moves every TCG number by up to 2× from one minute to "
        "the next, cancels out.")
    d.p()
    head = ["target", "measured", "ratio", "verdict"]
    out = []

    # memory
    tw = agg(pick(rows, "memory", "twheel", 1000000), "kernel_bytes_per_id")
    twd = agg(pick(rows, "memory_data", "twheel", 1000000),
              "kernel_bytes_per_id")
    tf_n = 1000000 if pick(rows, "memory", "timerfd", 1000000) else \
        max(sizes(rows, "memory", "timerfd") or [0])
    tf = agg(pick(rows, "memory", "timerfd", tf_n), "kernel_bytes_per_id")
    cg = agg(pick(rows, "memory", "twheel", 1000000, tag="memcg") +
             pick(rows, "memory", "twheel", 1000000, tag="kmem"),
             "kernel_bytes_per_id")
    if tw:
        out.append([
            "memory ≤ 64 B per armed id at 1M ids (stretch ≤ 48 B), vs ~600 B "
            "for timerfd",
            "twheel {} B/id{}; timerfd {} B/id (at {}){}".format(
                fmt(tw.med),
                " (ids armed with data: {} B/id)".format(fmt(twd.med))
                if twd else "",
                fmt(tf.med) if tf else "–", nfmt(tf_n),
                "; with memory-cgroup kernel accounting on (any host with a "
                "child memory cgroup) twheel {} B/id".format(fmt(cg.med))
                if cg else ""),
            "timerfd / twheel = {}×".format(fmt(tf.med / tw.med)) if tf else "–",
            verdict(tw.med <= 64, tw.med <= 48)])

    # touch cost: paired ratios, round by round
    for n in sizes(rows, "touch", "twheel"):
        t = agg(pick(rows, "touch", "twheel", n, batch=1024), "ns_per_touch")
        f = agg(pick(rows, "touch", "timerfd", n), "ns_per_touch")
        r = paired(rows, n, ("timerfd", None), ("twheel", 1024))
        if t and f and r:
            out.append([
                "write() of 1024-id batches ≥ 10× cheaper per id than "
                "timerfd_settime (stretch 20×), {} ids armed".format(nfmt(n)),
                "twheel {} ns/id; timerfd {} ns/id".format(fmt(t.med),
                                                         fmt(f.med)),
                "timerfd / twheel = {}× [{}–{}] ({} rounds)".format(
                    fmt(r.med), fmt(r.lo), fmt(r.hi), len(r.v)),
                verdict(r.med >= 10, r.med >= 20)])
    for n in sizes(rows, "touch", "twheel"):
        t = agg(pick(rows, "touch", "twheel", n, batch=1024), "ns_per_touch")
        i = agg(pick(rows, "touch", "inproc", n, batch=1024), "ns_per_touch")
        r = paired(rows, n, ("twheel", 1024), ("inproc", 1024))
        if t and i and r:
            out.append([
                "write() of 1024-id batches within 1.5× of the in-process "
                "wheel, {} ids armed".format(nfmt(n)),
                "twheel {} ns/id; in-process {} ns/id".format(fmt(t.med),
                                                            fmt(i.med)),
                "twheel / in-process = {}× [{}–{}] ({} rounds)".format(
                    fmt(r.med), fmt(r.lo), fmt(r.hi), len(r.v)),
                verdict(r.med <= 1.5)])

    # burst
    bn = 1000000 if pick(rows, "burst", "twheel", 1000000) else \
        max(sizes(rows, "burst", "twheel") or [0])
    b = pick(rows, "burst", "twheel", bn)
    if b:
        allr = agg(b, "all_read_s")
        qr = agg(b, "queued_read_s")
        hold = agg(b, "hold_max_ns")
        eb = guest.get("twheel_expire_batch", "?")
        rc = guest.get("twheel_read_chunk", "?")
        out.append([
            "{} ids expiring in one tick delivered through read() with no "
            "lock held for more than a bounded batch".format(nfmt(bn)),
            "bound: ≤ {} nodes per expiry lock hold (TW_HOLD_NODES), ≤ {} "
            "events per read() lock hold (TW_HOLD_EVENTS); longest expiry hold "
            "measured {} ms".format(eb, rc, fmt(hold.med / 1e6)),
            "longest hold = {}% of the {} s burst".format(
                fmt(100 * hold.med / 1e9 / allr.med, 2), fmt(allr.med)),
            verdict(isinstance(eb, int) and eb > 0) + " (by construction)"])
        r = allr.med / qr.med
        out.append([
            "…and the expiry itself costs little: events/s of the burst vs "
            "reading {} events already queued (criterion used here: burst "
            "time ≤ 2× the queued read)".format(nfmt(bn)),
            "burst {} s = {} events/s; already queued {} s = {} events/s".format(
                fmt(allr.med), fmt(bn / allr.med), fmt(qr.med),
                fmt(bn / qr.med)),
            "burst / queued time = {}×".format(fmt(r)), verdict(r <= 2)])

    # idle
    for state, what in (("empty", "an empty wheel"),
                        ("far", "a wheel with only far-future ids")):
        ir = pick(rows, "idle", "twheel", state=state)
        if ir:
            fires = sum(r.get("timer_fires", 0) for r in ir)
            secs = sum(r.get("seconds", 0) for r in ir)
            out.append([
                "zero hrtimer fires per second on {}".format(what),
                "{} fires in {} s ({} runs)".format(fires, fmt(secs), len(ir)),
                "{} fires/s".format(fmt(fires / secs if secs else 0)),
                verdict(fires == 0)])
    d.table(head, out)
    lib_targets(d, rows)


def runs(k):
    return "{} run{}".format(k, "" if k == 1 else "s")


def hb_paired(rows, n, num, den, key="cpu_sys_s_per_mtouch"):
    """Ratios num/den of two heartbeat contenders, repetition by repetition.

    The runs of one repetition follow each other in one boot, so their
    ratio sees the host's noise of the same few minutes.
    """
    out = []
    for rep in sorted({r.get("rep") for r in pick(rows, "heartbeat", n=n)}):
        a = pick(rows, "heartbeat", num, n, rep=rep)
        b = pick(rows, "heartbeat", den, n, rep=rep)
        if a and b and b[0].get(key):
            out.append(a[0][key] / b[0][key])
    return Agg(out)


def hb_cpu(rows, c, n):
    """The whole guest's CPU per touch of contender @c's heartbeats at @n."""
    return agg(pick(rows, "heartbeat", c, n), "cpu_sys_s_per_mtouch")


def reslots_per_touch(rs):
    """Re-slots per touch of the measured window, per run."""
    return Agg([r["reslots"] / r["window_touches"] for r in rs
                if r.get("reslots") is not None and r.get("window_touches")])


def lib_targets(d, rows):
    """The wheel's deferred work at in-process cost; the timer libraries."""
    d.p("### The heartbeat at in-process cost, and the timer libraries")
    d.p()
    d.p("The module's share of a heartbeat (its expiry and the lazy re-slots "
        "of touched ids, paid by the toucher and the reader) against the "
        "same wheel in the process: the whole guest's CPU per touch, the "
        "ratio taken within each repetition (the two run back to back), "
        "median [min–max].  Then the timer libraries a C service would use "
        "instead, at 1M ids: touch cost paired by round as in the touch "
        "table, the heartbeat's whole-guest CPU per touch paired by "
        "repetition, memory per id (twheel: kernel memory; a library: the "
        "process's heap growth, its timer records plus the id → record map, "
        "and without the map).")
    d.p()
    out = []
    for n in sizes(rows, "heartbeat", "twheel"):
        if n < 100000:
            continue
        r = hb_paired(rows, n, "twheel", "inproc")
        if not r:
            continue
        rt = reslots_per_touch(pick(rows, "heartbeat", "twheel", n))
        ri = reslots_per_touch(pick(rows, "heartbeat", "inproc", n))
        out.append([
            "heartbeat: whole-guest CPU per touch within 1.3× of the "
            "in-process wheel, {} ids".format(nfmt(n)),
            "twheel {} µs, in-process {} µs per touch; re-slots per touch "
            "{} / {}".format(
                cell(hb_cpu(rows, "twheel", n)),
                cell(hb_cpu(rows, "inproc", n)), cell(rt), cell(ri)),
            "twheel / in-process = {}× ({})".format(cell(r), runs(len(r.v))),
            verdict(r.med <= 1.3)])
    n = 1000000
    for lib, want in (("libev", 2), ("libevent", 4), ("libuv", 4)):
        r = paired(rows, n, (lib, None), ("twheel", 1024))
        if not r:
            continue
        out.append([
            "touch ≥ {}× cheaper than {}, 1M ids".format(want, LABEL[lib]),
            "twheel write(1024) {} ns; {} {} ns per touch".format(
                cell(agg(pick(rows, "touch", "twheel", n, batch=1024),
                         "ns_per_touch")), lib,
                cell(agg(pick(rows, "touch", lib, n), "ns_per_touch"))),
            "{} / twheel = {}× ({} rounds)".format(lib, cell(r), len(r.v)),
            verdict(r.med >= want)])
    r = hb_paired(rows, n, "libev", "twheel")
    if r:
        others = [(lib, hb_paired(rows, n, lib, "twheel")) for lib in LIBS
                  if lib != "libev"]
        out.append([
            "heartbeat: whole-guest CPU per touch ≥ 3× below libev's, 1M ids",
            "; ".join("{} {} µs".format(c, cell(hb_cpu(rows, c, n)))
                      for c in ["twheel"] + LIBS) + " per touch",
            "libev / twheel = {}× ({}); {}".format(
                cell(r), runs(len(r.v)), "; ".join(
                    "{} / twheel = {}×".format(c, cell(o))
                    for c, o in others if o)),
            verdict(r.med >= 3)])
    tw = agg(pick(rows, "memory", "twheel", n), "kernel_bytes_per_id")
    for lib in LIBS:
        lr = pick(rows, "memory", lib, n)
        h = agg(lr, "heap_bytes_per_id")
        if not (tw and h):
            continue
        m = agg(lr, "map_bytes_per_id")
        out.append([
            "memory per id below {}, 1M ids".format(LABEL[lib]),
            "twheel {} B (kernel); {} {} B ({} B without the map)".format(
                fmt(tw.med), lib, fmt(h.med),
                fmt(h.med - m.med) if m else "–"),
            "{} / twheel = {}×".format(lib, fmt(h.med / tw.med)),
            verdict(h.med > tw.med)])
    if out:
        d.table(["target", "measured", "ratio", "verdict"], out)


def scan_needed(rows):
    """CPU µs per touch the scan loop needs to scan once per 1 ms tick.

    Under TCG one pass over N ids takes longer than a tick beyond a few
    thousand ids: the loop then scans back to back at 100% of a core, and
    its measured CPU per touch is flat.  What it would need for one pass
    per tick is the pass time x 1000 ticks/s over the touches per second.
    """
    out = []
    for n in sizes(rows, "heartbeat", "scan"):
        r = pick(rows, "heartbeat", "scan", n)
        v = [x["scan_pass_ms"] * 1000 / x["touch_rate_per_ms"] for x in r
             if x.get("scan_pass_ms") and x.get("touch_rate_per_ms")]
        if v:
            a = Agg(v)
            out.append((n, a.med, a.lo, a.hi))
    return out


def kept_up(r):
    """The touches were done at the rate asked (within 5%)."""
    return (not r.get("aborted") and
            r.get("touching_s", 0) <= r.get("window_s", 0) * 1.05 + 0.05)


def heartbeat_section(d, rows, plots):
    d.p("## Heartbeat")
    d.p()
    d.p("N live ids, each touched once per period P at its own offset in the "
        "period; timeout 2P, tick 1 ms.  Every period one id in ten goes "
        "silent (it must expire exactly once, never early) and a new id "
        "takes its place, so each period has N touches of which N/10 are "
        "new ids, and N/10 expirations: the same steady state for every N, "
        "at the same touch rate (P = N / rate), so a cost per touch that "
        "grows with N is the contender's own.  The ids are armed before the "
        "window (setup, not measured) as if each had been touched one "
        "period earlier.  CPU is measured from the second period to the "
        "last touch.  *System CPU* is the whole guest's busy time (CPUs × "
        "wall − idle, exact with the tick stopped in idle), so it includes "
        "twheel's expiry work in its kworker and timer interrupts; *process "
        "CPU* is the bench process's own user + system time.  CPU seconds "
        "per million touches = µs per touch.  Lateness = when the event "
        "reached the process − its deadline.  *Kept up*: the contender did "
        "its touches at the rate asked (the last one within 5% of the "
        "window's end).  A touch that comes after the id's deadline (*touch "
        "lag*: the bench was late, because the contender is too slow or the "
        "guest stalled) lets a live id expire: *spurious*, the correct "
        "behaviour for a late touch.  A contender that cannot sustain the "
        "rate stops at twice the window; its CPU figure is then its "
        "saturated cost (for timerfd a spiral: late touches find their "
        "timerfd expired and closed and create a new one).")
    d.p()
    for n in sizes(rows, "heartbeat"):
        rs = pick(rows, "heartbeat", n=n)
        r0 = rs[0]
        d.p("### {} ids: period {} ms, timeout {} ms, {} periods, {} touches "
            "per ms".format(nfmt(n), r0.get("period_ms"), r0.get("timeout_ms"),
                            r0.get("periods"),
                            fmt(r0.get("touch_rate_per_ms"))))
        d.p()
        out = []
        for c in CONTENDERS:
            r = pick(rows, "heartbeat", c, n)
            if not r:
                continue
            early = sum(x.get("early", 0) for x in r)
            kept = sum(1 for x in r if kept_up(x))
            missing = sum(x.get("missing", 0) for x in r)
            deliv = "{}/{}".format(int(agg(r, "delivered_expected").med),
                                   int(agg(r, "expected").med))
            if missing:
                deliv += " (**{} missing**)".format(missing)
            ku = "{}/{}".format(kept, len(r))
            if kept < len(r):
                ku += ", {} touches/ms done".format(
                    fmt(agg(r, "achieved_rate_per_ms").med))
            out.append([
                LABEL[c], len(r), ku,
                cell(agg(r, "cpu_sys_s_per_mtouch")),
                cell(agg(r, "cpu_self_s_per_mtouch")),
                deliv, cell(agg(r, "spurious"), 3), early,
                cell(agg(r, "late_p50_ms")), cell(agg(r, "late_p99_ms")),
                cell(agg(r, "late_max_ms")),
                cell(agg(r, "max_touch_lag_ms")),
            ])
        d.table(["contender", "runs", "kept up", "system CPU s / M touches",
                 "process CPU s / M touches", "delivered / expected",
                 "spurious", "early", "lateness p50 ms", "p99 ms", "max ms",
                 "touch lag max ms"], out)
        tw = pick(rows, "heartbeat", "twheel", n)
        if tw:
            ip = pick(rows, "heartbeat", "inproc", n)
            d.p("twheel in the measured window: {} hrtimer fires, {} expiry "
                "runs, {} re-slots ({} per touch; the in-process wheel {}); "
                "over the run: longest expiry lock hold {} "
                "ms, largest queueing lateness (expired_ns − deadline_ns) {} "
                "ms.".format(
                    cell(agg(tw, "timer_fires")), cell(agg(tw, "runs")),
                    cell(agg(tw, "reslots")), cell(reslots_per_touch(tw)),
                    cell(reslots_per_touch(ip)) if ip else "–",
                    cell(agg(tw, "hold_max_ns"), scale=1e-6),
                    cell(agg(tw, "late_max_ns"), scale=1e-6)))
            d.p()
    series = [(LABEL[c], COLOR[c], pts(rows, "heartbeat", c,
                                       "cpu_sys_s_per_mtouch"))
              for c in CONTENDERS]
    series.append((LABEL["scan"] + ": needed to scan every tick", "#ffbb78",
                   scan_needed(rows)))
    if line_plot("heartbeat_cpu.png",
                 "Heartbeat: CPU per touch as N grows (scaling)",
                 "ids (N)", "system CPU µs per touch (= s per M touches)",
                 series, plots["dir"],
                 note="median of the repetitions, bars min–max; the same "
                      "touch rate for every N"):
        plots["list"].append(("heartbeat_cpu.png",
                              "Heartbeat CPU per touch vs N"))
    series = [(LABEL[c] + " p99", COLOR[c], pts(rows, "heartbeat", c,
                                                "late_p99_ms"))
              for c in CONTENDERS]
    if line_plot("heartbeat_lateness.png",
                 "Heartbeat: lateness of the silent ids' events (p99)",
                 "ids (N)", "ms after the deadline", series, plots["dir"]):
        plots["list"].append(("heartbeat_lateness.png",
                              "Heartbeat lateness p99 vs N"))


def uring_section(d, rows):
    """Touch through io_uring (tag io_uring) against write()."""
    ns = sorted({r.get("n") for r in pick(rows, "touch", tag="io_uring")})
    if not ns:
        return
    d.p("### Touch through io_uring")
    d.p()
    d.p("The same touch run with twheel alone, three ways on one wheel "
        "each: write() on an O_NONBLOCK fd, and IORING_OP_WRITE on a "
        "blocking fd, 1024 ids per SQE, every SQE of a call in one submit "
        "(a call of 8192 ids is 8 SQEs), then waiting for the CQEs "
        "(io_uring_wait_cqe); with SQPOLL the kernel's SQ thread submits "
        "and the bench spins on the CQ ring, so it counts no syscall but "
        "keeps a second CPU busy.  The ratio divides each round by "
        "write(1024) in the same round.")
    d.p()
    out = []
    for n in ns:
        for c, lab in (("twheel", "write()"), ("uring", "io_uring"),
                       ("sqpoll", "io_uring, SQPOLL")):
            for b in (1024, 8192):
                a = agg(pick(rows, "touch", c, n, tag="io_uring", batch=b),
                        "ns_per_touch")
                if not a:
                    continue
                pr = paired(rows, n, (c, b), ("twheel", 1024), tag="io_uring")
                out.append([nfmt(n), lab, "{} ids ({} SQE{})".format(
                    b, b // 1024, "s" if b > 1024 else "")
                    if c != "twheel" else "{} ids per call".format(b),
                    len(a.v), cell(a), cell(pr) + "×" if pr else "–"])
    d.table(["N", "how", "per call", "runs", "ns per touch",
             "÷ write(1024), paired by round"], out)


def touch_section(d, rows, plots):
    d.p("## Touch throughput")
    d.p()
    d.p("All contenders in one process, each holding the same N ids (armed "
        "first, timeout 1 h, so nothing expires; then each finishes the "
        "work that arming deferred: twheel's work item goes idle, and the "
        "in-process wheel, which has no worker, finishes the index resize "
        "that the arming left migrating itself, so that no round pays for "
        "the arming; `settle` JSON lines); then the same stream of "
        "random touches of those ids for every contender, interleaved in "
        "rounds: twheel "
        "as write() of 1, 64 or 1024 ids; the in-process wheel with the "
        "same batches (one clock read per 64 ids, as the module); timerfd "
        "as one timerfd_settime() per id and scan as one map update per id, "
        "each with one clock read per 1024 ids; the timer libraries the "
        "same way, one call per id on the id's timer after refreshing the "
        "loop's cached time once per 1024 ids: libev's ev_timer_again(), "
        "libevent's event_add() with a common timeout (run from a callback "
        "of one loop iteration, whose cached time it uses), libuv's "
        "uv_timer_start().  Wall ns per touch: the "
        "stream is cut into rounds, each round runs every series once "
        "(rotating order), and a run reports its best round (noise from the "
        "shared host only ever adds time; every round is in the JSON "
        "lines).  The ratio column divides each round by twheel's 1024-id "
        "round of the same round.  *Insert* is the cost of a new id "
        "(arming the N ids in 1024-id batches).")
    d.p()
    for n in sizes(rows, "touch"):
        base = agg(pick(rows, "touch", "twheel", n, batch=1024), "ns_per_touch")
        out = []
        for c in CONTENDERS:
            bs = sorted({r.get("batch") for r in pick(rows, "touch", c, n)})
            for b in bs:
                a = agg(pick(rows, "touch", c, n, batch=b), "ns_per_touch")
                ins = agg(pick(rows, "insert", c, n), "ns_per_id")
                what = ("per id" if c in PER_ID else
                        "{} ids per call".format(b))
                pr = paired(rows, n, (c, b), ("twheel", 1024))
                out.append([LABEL[c], what, len(a.v), cell(a),
                            cell(pr) + "×" if pr else "–", cell(ins)])
        d.p("### {} ids armed".format(nfmt(n)))
        d.p()
        d.table(["contender", "batch", "runs", "ns per touch",
                 "÷ twheel write(1024), paired by round",
                 "insert ns per new id"], out)
    fam = [(t, n) for t in ("ids-dense", "ids-flood")
           for n in sorted({r.get("n") for r in pick(rows, "touch", tag=t)})]
    if fam:
        d.p("### Structured ids")
        d.p()
        d.p("The same touch run with other ids (`--ids`): *dense* 0, 1, 2, "
            "...; *flood* i × 0x0e217c1e66c88cc3, the inverse of "
            "GOLDEN_RATIO_64, whose index keys were 0, 1, 2, ... while the "
            "index was keyed by that constant alone (one home slot for "
            "every id: 66 µs per touch at 20K ids).  The index is now keyed "
            "with a secret drawn per fd, so every family should cost what "
            "random ids cost.  Random is the untagged run of the same N.")
        d.p()
        out = []
        for t, n in [(None, n) for n in sorted({n for _, n in fam})] + fam:
            label = "random" if t is None else t[4:]
            tw = agg(pick(rows, "touch", "twheel", n, tag=t, batch=1024),
                     "ns_per_touch")
            ip = agg(pick(rows, "touch", "inproc", n, tag=t, batch=1024),
                     "ns_per_touch")
            rnd = agg(pick(rows, "touch", "twheel", n, batch=1024),
                      "ns_per_touch")
            if tw or ip:
                out.append([label, nfmt(n), len((tw or ip).v), cell(tw),
                            cell(ip), fmt(tw.med / rnd.med) + "×"
                            if tw and rnd else "–"])
        d.table(["ids", "N", "runs", "twheel write(1024) ns per touch",
                 "in-process ×1024 ns per touch",
                 "twheel ÷ twheel with random ids"], out)
    uring_section(d, rows)
    series = []
    for c, b in (("twheel", 1), ("twheel", 64), ("twheel", 1024),
                 ("inproc", 1024), ("inproc", 1), ("timerfd", None),
                 ("scan", None)) + tuple((c, None) for c in LIBS):
        m = {"batch": b} if b else {}
        lab = LABEL[c] + (" ×{}".format(b) if b else "")
        col = COLOR[c]
        if c == "twheel" and b != 1024:
            col = {1: "#9ecae1", 64: "#4292c6"}[b]
        if c == "inproc" and b == 1:
            col = "#a1d99b"
        series.append((lab, col, pts(rows, "touch", c, "ns_per_touch", **m)))
    if line_plot("touch_ns.png", "Touch: ns per touch as N grows",
                 "ids armed (N)", "ns per touch (wall)", series, plots["dir"],
                 note="random touches of armed ids; median, bars min–max"):
        plots["list"].append(("touch_ns.png", "ns per touch vs N"))


def memory_section(d, rows, plots):
    # runs since the bench settles before measuring memory say what the
    # last arm left (mem_bytes_per_id_at_arm); older runs are rendered as
    # they were measured
    settled = any("mem_bytes_per_id_at_arm" in r for r in rows
                  if r.get("workload") in ("memory", "memory_data"))
    d.p("## Memory")
    d.p()
    d.p("Kernel memory per armed id: the growth of /proc/meminfo `Slab` "
        "(slab caches plus large kmalloc pages) and `VmallocUsed` while the "
        "process holds N ids, after shrinking every cache (the guest boots "
        "with slab_nomerge, so each cache is its own line in /proc/slabinfo: "
        "the caches that grew most are listed).  twheel also reports "
        "`stats.mem_bytes`.  The map + scan, in-process and timer-library "
        "contenders hold user memory only: the process's RSS growth, and "
        "its malloc() heap growth (mallinfo2, chunk headers included), "
        "which unlike the RSS does not miss the memory that a contender "
        "armed earlier in the same process freed and a later one reused.  "
        "The timer libraries keep one malloc'd record per id (the "
        "library's timer, the id, its deadline) in a hash map id → record "
        "of 16 B per slot, at most 2/3 full; the JSON lines have the "
        "record's size and the map's bytes per id.  Measured with no "
        "child memory cgroup on the system; the cost with memory-cgroup "
        "accounting on follows.  The ids are touched with write(), so they "
        "carry no data; *twheel, ids armed with data* is the same N ids "
        "armed on a fresh fd with TWHEEL_IOC_ARM and non-zero data (every "
        "node holds a payload slot, so the two differ only by the fill of "
        "the index table)." + (
            "  Every contender is measured once it finished what the arming "
            "deferred (twheel's work item idle, the in-process wheel's index "
            "resize done): a resize that the last arm left migrating holds "
            "the old table and the new one until it ends.  twheel's *at the "
            "last arm* is its stats.mem_bytes before that: what such a "
            "resize adds at its peak, where the last arm fell." if settled
            else ""))
    d.p()
    for n in sizes(rows, "memory"):
        out = []
        for c in CONTENDERS:
            r = pick(rows, "memory", c, n)
            if not r:
                continue
            rd = pick(rows, "memory_data", c, n) if c == "twheel" else []
            for label, rr in ((LABEL[c], r),
                              (LABEL[c] + ", ids armed with data", rd)):
                if not rr:
                    continue
                top = rr[-1].get("slab_top", [])
                tops = ", ".join("{} {}".format(t["cache"], fmt(t["bytes_per_id"]))
                                 for t in top if t["bytes_per_id"] >= 1)
                row = [label, len(rr), cell(agg(rr, "kernel_bytes_per_id")),
                       cell(agg(rr, "mem_bytes_per_id")) if c == "twheel" else "–"]
                if settled:
                    row.append(cell(agg(rr, "mem_bytes_per_id_at_arm"))
                               if c == "twheel" else "–")
                out.append(row + [tops or "–", cell(agg(rr, "rss_bytes_per_id")),
                                  cell(agg(rr, "heap_bytes_per_id"))])
        d.p("### {} ids".format(nfmt(n)))
        d.p()
        d.table(["contender", "runs", "kernel B per id", "stats.mem_bytes per id"] +
                (["at the last arm"] if settled else []) +
                ["largest slab growth, B per id", "process RSS B per id",
                 "process heap B per id"], out)
    cgr = [r for r in rows if r.get("workload") == "memory" and
           r.get("tag") in ("memcg", "kmem")]
    if cgr:
        d.p("### With memory-cgroup kernel accounting on")
        d.p()
        d.p("The tables above are measured before any child memory cgroup "
            "exists, so SLUB's memory-cgroup accounting is off.  The first "
            "child memory cgroup switches it on for good (this run creates "
            "one at its very end, after everything above): from then on "
            "every new slab page of an accounted cache (twheel_node is "
            "SLAB_ACCOUNT) carries an obj_cgroup pointer vector, one pointer "
            "per object, itself a kmalloc allocation — 85 twheel nodes of 48 B "
            "per page: 680 B, rounded up to kmalloc-1k — whatever cgroup the task "
            "is in.  A host where systemd runs services in memory cgroups "
            "always has it on (unless booted with cgroup.memory=nokmem).")
        d.p()
        out = []
        for tag, where in (("memcg", "a child memory cgroup"),
                           ("kmem", "the root cgroup, accounting on")):
            for c in CONTENDERS:
                for n in sorted({r["n"] for r in cgr
                                 if r["contender"] == c and r["tag"] == tag}):
                    r = [x for x in cgr if x["contender"] == c and
                         x["n"] == n and x["tag"] == tag]
                    top = r[-1].get("slab_top", [])
                    tops = ", ".join("{} {}".format(t["cache"],
                                                    fmt(t["bytes_per_id"]))
                                     for t in top if t["bytes_per_id"] >= 1)
                    out.append([LABEL[c], nfmt(n), where,
                                cell(agg(r, "kernel_bytes_per_id")),
                                tops or "–"])
        d.table(["contender", "ids", "process in", "kernel B per id",
                 "largest slab growth, B per id"], out)
    series = [(LABEL[c] + " (kernel)", COLOR[c],
               pts(rows, "memory", c, "kernel_bytes_per_id"))
              for c in ("twheel", "timerfd")]
    # user memory: the heap growth where the run measured it, else the RSS
    heap = any("heap_bytes_per_id" in r for r in pick(rows, "memory"))
    key, what = (("heap_bytes_per_id", "heap") if heap else
                 ("rss_bytes_per_id", "RSS"))
    series += [(LABEL[c] + " (user {})".format(what), COLOR[c],
                pts(rows, "memory", c, key))
               for c in USER]
    if line_plot("memory.png", "Memory per armed id", "ids (N)",
                 "bytes per id", series, plots["dir"],
                 note="kernel: Slab + VmallocUsed growth; user: {} growth"
                 .format("malloc() heap" if heap else "RSS")):
        plots["list"].append(("memory.png", "bytes per id vs N"))


def burst_section(d, rows, guest, plots):
    d.p("## Expiry burst")
    d.p()
    d.p("N ids armed with the same absolute deadline on a tick boundary, "
        "then read until all arrived: *all read* runs from the deadline to "
        "the last event in user space.  Then the same N ids armed with a "
        "deadline in the past, which queues them at once, and read: the "
        "rate of reading events that were already queued.  The module "
        "expires at most {} nodes per lock hold and copies at most {} "
        "events per read() lock hold.  *Re-slots*: the ids of a burst sit "
        "in one coarse slot first and are moved down the levels (one "
        "re-slot per id and level) before the first can expire.".format(
            guest.get("twheel_expire_batch", "?"),
            guest.get("twheel_read_chunk", "?")))
    d.p()
    groups = {}
    for n in sizes(rows, "burst"):
        out = []
        for c in CONTENDERS:
            r = pick(rows, "burst", c, n)
            if not r:
                continue
            a, q_ = agg(r, "all_read_s"), agg(r, "queued_read_s")
            out.append([LABEL[c], len(r), cell(agg(r, "arm_s")), cell(a),
                        fmt(n / a.med) if a else "–",
                        cell(agg(r, "first_ms")), cell(q_),
                        fmt(n / q_.med) if q_ else "–",
                        "{}×".format(fmt(a.med / q_.med)) if a and q_ else "–",
                        cell(agg(r, "hold_max_ns"), scale=1e-6)
                        if c in ("twheel", "inproc") else "–",
                        cell(agg(r, "runs")) if c == "twheel" else "–",
                        cell(agg(r, "reslots"))
                        if c in ("twheel", "inproc") else "–"])
            groups.setdefault(n, {})[c] = (a, q_)
        d.p("### {} ids".format(nfmt(n)))
        d.p()
        d.table(["contender", "runs", "arm s", "all read s", "events/s",
                 "first event ms after the deadline", "already queued: read s",
                 "events/s", "burst / queued", "longest expiry hold ms",
                 "expiry runs", "re-slots"], out)
    if groups:
        n = max(groups)
        bars = []
        for c in CONTENDERS:
            if c in groups[n]:
                a, q_ = groups[n][c]
                bars.append((LABEL[c], [
                    (n / a.med, n / a.hi, n / a.lo),
                    (n / q_.med, n / q_.hi, n / q_.lo)]))
        if bar_plot("burst.png", "Expiry burst: {} ids due in one tick".format(
                nfmt(n)), "events per second (read by the process)", bars,
                ["due in one tick", "already queued"], ["#6baed6", "#fd8d3c"],
                plots["dir"], logy=True,
                note="median, bars min–max over the repetitions"):
            plots["list"].append(("burst.png", "expiry burst events/s"))


def idle_section(d, rows, plots):
    d.p("## Idle")
    d.p()
    d.p("Each contender in its own process, all side by side: some "
        "seconds with no id, then some seconds with 10,000 ids a year away. "
        "CPU = utime + stime from /proc/self/stat over the phase (tick "
        "granularity, 10 ms) and from getrusage() (exact); twheel's hrtimer "
        "fires from `stats.timer_fires`.")
    d.p()
    out = []
    bars = []
    for c in CONTENDERS:
        vals = []
        for st in ("empty", "far"):
            r = pick(rows, "idle", c, state=st)
            if not r:
                vals.append(None)
                continue
            cpu = agg(r, "cpu_pct")
            extra = ""
            if c == "twheel":
                extra = "{} fires/s".format(cell(agg(r, "fires_per_s")))
            elif c == "scan":
                extra = "{} scans/s".format(cell(agg(r, "scans_per_s")))
            out.append([LABEL[c], "no id" if st == "empty" else
                        "{} ids a year away".format(nfmt(r[0]["n"])), len(r),
                        cell(cpu, 2), cell(agg(r, "cpu_rusage_pct"), 2),
                        extra or "–", sum(x.get("events", 0) for x in r)])
            vals.append((cpu.med, cpu.lo, cpu.hi))
        bars.append((LABEL[c], vals))
    d.table(["contender", "state", "runs", "CPU % (/proc/self/stat)",
             "CPU % (getrusage)", "wakeups", "events"], out)
    if bar_plot("idle.png", "Idle: CPU of each contender", "CPU % of one core",
                bars, ["no id", "10K ids a year away"], ["#9ecae1", "#3182bd"],
                plots["dir"]):
        plots["list"].append(("idle.png", "idle CPU"))


def scaling_section(d, rows):
    d.p("## Scaling")
    d.p()
    d.p("Cost per operation as N grows (medians): heartbeat system CPU µs per "
        "touch (all costs of keeping N ids alive at the same touch rate, "
        "including new ids, expiry and the scan loop; a contender that did "
        "not keep up is marked *), and ns per random touch of N armed ids.  "
        "Under TCG one scan pass over 10K ids already takes about a tick, so "
        "the scan loop runs back to back at 100% of a core at every N: its "
        "measured CPU per touch is flat (the core is saturated) and its cost "
        "shows as lateness, which grows with the pass time.  The row *needed "
        "to scan every 1 ms tick* is what the design asks for: pass time × "
        "1000 / touches per ms, linear in N.")
    d.p()
    ns = sorted(set(sizes(rows, "heartbeat")) | set(sizes(rows, "touch")))
    head = ["metric"] + [nfmt(n) for n in ns]
    out = []
    def hb(c, n):
        r = pick(rows, "heartbeat", c, n)
        v = fmt(agg(r, "cpu_sys_s_per_mtouch").med)
        if r and not all(kept_up(x) for x in r):
            v += "*"
        return v
    for c in CONTENDERS:
        out.append(["heartbeat µs/touch, " + LABEL[c]] + [hb(c, n) for n in ns])
    need = dict((p[0], p[1]) for p in scan_needed(rows))
    out.append(["heartbeat µs/touch, " + LABEL["scan"] +
                ", needed to scan every 1 ms tick"] +
               [fmt(need.get(n)) for n in ns])
    out.append(["ms per scan pass over the N ids"] + [
        fmt(agg(pick(rows, "heartbeat", "scan", n), "scan_pass_ms").med)
        for n in ns])
    for c, b in (("twheel", 1024), ("twheel", 1), ("inproc", 1024),
                 ("timerfd", None), ("scan", None)) + tuple((c, None)
                                                            for c in LIBS):
        m = {"batch": b} if b else {}
        out.append(["touch ns, " + LABEL[c] + (" ×{}".format(b) if b else "")] +
                   [fmt(agg(pick(rows, "touch", c, n, **m), "ns_per_touch").med)
                    for n in ns])
    d.table(head, out)


def limits_section(d, rows):
    lim = pick(rows, "limits")
    tl = [r for r in rows if r.get("workload") == "limit"]
    if not lim and not tl:
        return
    d.p("## timerfd limits")
    d.p()
    if lim:
        r = lim[-1]
        d.p("The guest script raises `fs.nr_open` as far as the kernel "
            "accepts (its hard maximum, sysctl_nr_open_max) and the bench "
            "sets RLIMIT_NOFILE to it; `fs.file-max` and "
            "`fs.epoll.max_user_watches` are raised too.  Reached: "
            "nr_open = {:,}, RLIMIT_NOFILE = {:,}, file-max = {:,}, "
            "epoll max_user_watches = {:,}.  So the fd limits stop nothing "
            "below a billion ids; what stops timerfd is memory (the kernel "
            "bytes per id above) and, under TCG, time: creating a timerfd and "
            "adding it to epoll costs the insert ns per id above.".format(
                r.get("nr_open", 0), r.get("rlimit_nofile", 0),
                r.get("file_max", 0), r.get("epoll_max_user_watches", 0)))
        d.p()
    for r in tl:
        d.p("- {} stopped at {:,} of {:,} ids: {}".format(
            r["contender"], r.get("reached", 0), r["n"], r.get("error", "?")))
    if tl:
        d.p()


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    src, docs = sys.argv[1], sys.argv[2]
    top = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    rows = load(os.path.join(src, "bench.jsonl"))
    if not rows:
        print("render: no results in " + src, file=sys.stderr)
        return 1
    guest = {}
    gpath = os.path.join(src, "guest.json")
    if os.path.exists(gpath):
        with open(gpath) as f:
            guest = json.load(f)
    host = {}
    hpath = os.path.join(src, "host.json")
    if os.path.exists(hpath):
        with open(hpath) as f:
            host = json.load(f)
    os.makedirs(docs, exist_ok=True)
    raw = os.path.join(docs, "raw")
    os.makedirs(raw, exist_ok=True)
    for name in ("bench.jsonl", "guest.json", "host.json"):
        if os.path.exists(os.path.join(src, name)):
            shutil.copy(os.path.join(src, name), os.path.join(raw, name))
    for name in os.listdir(docs):
        if name.endswith(".png"):
            os.remove(os.path.join(docs, name))

    d = Doc()
    d.p("# twheel benchmark results")
    d.p()
    d.p("Generated by `scripts/bench.sh` (`make bench`) from one boot of the "
        "QEMU guest; do not edit by hand.  Raw results: "
        "[raw/bench.jsonl](raw/bench.jsonl) (one JSON object per run), "
        "[raw/guest.json](raw/guest.json).")
    d.p()
    mem = guest.get("mem_kb", 0) / 1048576
    d.p("- run: {}; module source: commit {}".format(
        host.get("date") or time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        host.get("source") or git_desc(top)))
    d.p("- guest: Linux {}, {} vCPUs ({}), {:.1f} GiB, clocksource {}, "
        "THP {}".format(guest.get("kernel", "?"), guest.get("cpus", "?"),
                        guest.get("cpu_model", "?"), mem,
                        guest.get("clocksource", "?"), guest.get("thp", "?")))
    if host:
        d.p("- host: {} CPUs shared with other work; load average (1, 5, 15 "
            "min) {} before the run, {} after; the guest ran {} s".format(
                host.get("nproc", "?"), host.get("loadavg_before", "?"),
                host.get("loadavg_after", "?"), host.get("guest_s", "?")))
    d.p("- QEMU under TCG (no KVM on this machine): every instruction is "
        "emulated, roughly 10–50× slower than the host and noisier. Absolute "
        "numbers are TCG numbers; the ratios between contenders measured in "
        "the same run are what the targets judge.")
    d.p("- repetitions: {} for {} ids (timerfd up to {}); at {} ids {} of "
        "the touch run ({}), {} of the heartbeat of twheel and the in-process "
        "wheel and one of the others ({}); one for timerfd at {} ids "
        "(memory, touch); {} random touches per touch measurement in {} "
        "rounds; "
        "heartbeat touch rate "
        "{} per ms; idle phases of {} s.  Cells are `median [min–max]` over "
        "the runs.".format(
            guest.get("reps", "?"),
            ", ".join(nfmt(int(x)) for x in str(guest.get("sizes", "")).split()),
            nfmt(guest.get("tfd_max", 0)), nfmt(guest.get("big", 0)),
            guest.get("big_reps", 1), guest.get("big_touch", "?"),
            guest.get("big_hb_reps", 1), guest.get("big_hb", "?"),
            nfmt(guest.get("tfd_big", 0)), guest.get("touches", "?"),
            guest.get("rounds", 5), guest.get("rate", "?"),
            guest.get("idle_s", "?")))
    d.p("- contenders, all on the same stream of ids: **twheel** "
        "(/dev/twheel: write() touches, read() events), **in-process "
        "wheel** (kmod/wheel.c and index.c linked into the bench with the "
        "tools/include shims, driven like the module drives it, malloc'd "
        "nodes), **timerfd + epoll** (one timerfd per id), **map + scan** "
        "(hash map id → last seen, scanned every 1 ms tick), and the timer "
        "libraries a C service would use instead, each with one timer per "
        "id run by its own loop: **libev** (ev_timer), **libevent** (an "
        "event per id on a common timeout), **libuv** (uv_timer_t).")
    d.p()
    targets(d, rows, guest)

    plots = {"dir": docs, "list": []}
    with tempfile.TemporaryDirectory() as tmp:
        plots["dir"] = tmp
        heartbeat_section(d, rows, plots)
        touch_section(d, rows, plots)
        burst_section(d, rows, guest, plots)
        memory_section(d, rows, plots)
        idle_section(d, rows, plots)
        scaling_section(d, rows)
        limits_section(d, rows)
        for name, _ in plots["list"]:
            shutil.copy(os.path.join(tmp, name), os.path.join(docs, name))
    d.p("## Plots")
    d.p()
    for name, alt in plots["list"]:
        d.p("![{}]({})".format(alt, name))
        d.p()
    d.p("## Reproduce")
    d.p()
    d.p("`make bench` (= `scripts/bench.sh`): builds the module and "
        "userspace/bench, boots the guest once, runs "
        "userspace/bench/run_guest.sh, renders this page.  "
        "`scripts/bench.sh --render DIR` re-renders from a run's output "
        "directory; `scripts/bench.sh --short` is the one-minute sanity run "
        "that `make check` also runs.")
    with open(os.path.join(docs, "results.md"), "w") as f:
        f.write("\n".join(d.lines).rstrip() + "\n")
    print("render: wrote {}/results.md and {} plots".format(
        docs, len(plots["list"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
