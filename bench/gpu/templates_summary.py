#!/usr/bin/env python3
"""The issue-21 targets table from what bench/gpu/templates.sh left in OUTDIR.

Reads OUTDIR/problems.tsv (group, shape, epilogue, exit code, wall ms, JSON log per problem),
each problem's `ktune gemm --json-log` (one JSON line per candidate with its final statistics,
then the selection with the winner: src/select/json_log.cpp) and OUTDIR/inductor-templates.jsonl
(bench/gpu/inductor_gemm_anchor.py), and prints markdown: one table per target group with
PASS/FAIL per target. A problem without a result (exit code, timeout, no log) fails its targets
and says so; it does not stop the others.

  python3 bench/gpu/templates_summary.py OUTDIR > OUTDIR/summary.md
  python3 bench/gpu/templates_summary.py --check    # the parser against bench/gpu/templates_sample
"""
import json
import os
import sys

# The targets of issue 21.
PLAIN_MIN = 0.90          # best template / cuBLAS throughput at the two big cubes
PLAIN_MIN_SHAPES = ("4096x4096x4096", "8192x8192x8192")
AT_OR_ABOVE_SHAPES = 2    # plain shapes where the best template is at or above cuBLAS
UNALIGNED_MIN = 0.80
FUSED_MARGIN = 1.10       # best library + separate epilogue / the fused template pick


def classify(name):
    """template (ktune's kernels, the restride copies + TMA GEMM included) | pair (library GEMM
    + the separate epilogue kernel) | library (cuBLAS, cuBLASLt algorithms, cuBLASLt's own
    fused epilogues)."""
    if name.endswith("+epilogue"):
        return "pair"
    if name.startswith("cuda_") or name.startswith("restride+cuda_"):
        return "template"
    return "library"


class Problem:
    def __init__(self, group, shape, epilogue, rc, wall_ms, log):
        self.group, self.shape, self.epilogue = group, shape, epilogue
        self.rc, self.wall_ms, self.log = rc, wall_ms, log
        self.candidates = {}  # name -> the candidate's JSON line
        self.winner = None
        self.error = None

    def load(self, outdir):
        if self.rc != 0:  # its log may be partial or absent; the exit code says why
            self.error = "ktune exit %d (%s)" % (self.rc, "timed out" if self.rc == 124 else
                                                 "see " + self.log.replace(".jsonl", ".log"))
            return
        path = os.path.join(outdir, self.log)
        try:
            with open(path) as f:
                for n, line in enumerate(f, 1):
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        j = json.loads(line)
                    except ValueError:
                        self.error = "%s:%d: not JSON" % (self.log, n)
                        return
                    if j.get("event") == "candidate":
                        self.candidates[j["name"]] = j
                    elif j.get("event") == "selection":
                        self.winner = j.get("winner")
        except OSError as e:
            self.error = "%s: %s" % (self.log, e.strerror)
            return
        if not self.winner or self.winner not in self.candidates:
            self.error = "no selection in " + self.log

    def best(self, kind):
        """The fastest measured candidate of a kind: (name, JSON line) or None. Abandoned ones
        count with their partial median (measured until clearly slower than the best so far):
        a kind whose every candidate was abandoned still shows how far behind it is."""
        ok = [(c["median_ns"], n, c) for n, c in self.candidates.items()
              if classify(n) == kind and c.get("outcome") in ("ok", "abandoned")
              and c.get("median_ns")]
        return min(ok, key=lambda t: t[0])[1:] if ok else None

    def ns(self, name):
        c = self.candidates.get(name)
        return c["median_ns"] if c and c.get("outcome") == "ok" and c.get("median_ns") else None

    def cublas_ns(self):
        """cuBLAS's time: cublasGemmEx, or where its default math failed verification (split-K
        partial sums in bf16 against the fp32-reduction reference) its fastest cuBLASLt
        algorithm, the best cuBLAS answer that passed."""
        t = self.ns("cublas_gemm" if self.epilogue == "none" else "cublas_gemm+epilogue")
        if t is None and self.epilogue == "none":
            lib = self.best("library")
            t = lib[1]["median_ns"] if lib and lib[1].get("outcome") == "ok" else None
        return t

    def pick_ns(self):
        return self.ns(self.winner) if self.winner else None


def ms(ns):
    return "%.4f" % (ns / 1e6) if ns else "-"


def ratio(a, b):
    return a / b if a and b else None


def fmt_ratio(r):
    return "%.3f" % r if r is not None else "-"


def verdict(ok):
    return "PASS" if ok else "FAIL"


def template_cell(p):
    b = p.best("template")
    if not b:
        return "none measured", None
    name, c = b
    return name, c["median_ns"]  # a template choice's name carries its parameters


def read_problems(outdir):
    problems = []
    with open(os.path.join(outdir, "problems.tsv")) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            group, shape, epilogue, rc, wall_ms, log = line.rstrip("\n").split("\t")
            p = Problem(group, shape, epilogue, int(rc), int(wall_ms), log)
            p.load(outdir)
            problems.append(p)
    return problems


def read_inductor(outdir):
    rows = {}
    path = os.path.join(outdir, "inductor-templates.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    j = json.loads(line)
                except ValueError:
                    continue  # a line of Triton's noise
                rows[("%dx%dx%d" % (j["M"], j["N"], j["K"]), j.get("epilogue", ""))] = j
    return rows


def plain_tables(out, problems, group, title, floor, floor_shapes):
    """Rows of a plain group; returns the shapes at or above cuBLAS and the failed targets."""
    out.append("## %s\n" % title)
    out.append("| shape | best template (params) | template ms | cuBLAS ms | best library | pick "
               "| template / cuBLAS throughput | target |")
    out.append("|---|---|---|---|---|---|---|---|")
    above, failed = [], []
    for p in (q for q in problems if q.group == group):
        if p.error:
            out.append("| %s | %s | - | - | - | - | - | %s |" % (
                p.shape, p.error, "FAIL" if floor_shapes is None or p.shape in floor_shapes
                else "-"))
            if floor_shapes is None or p.shape in floor_shapes:
                failed.append(p.shape)
            continue
        cell, t_ns = template_cell(p)
        lib = p.best("library")
        r = ratio(p.cublas_ns(), t_ns)
        if r is not None and r >= 1.0:
            above.append(p.shape)
        target = "-"
        if floor_shapes is None or p.shape in floor_shapes:
            ok = r is not None and r >= floor
            target = "%s (>= %.0f%%)" % (verdict(ok), floor * 100)
            if not ok:
                failed.append(p.shape)
        out.append("| %s | %s | %s | %s | %s (%s) | %s | %s | %s |" % (
            p.shape, cell, ms(t_ns), ms(p.cublas_ns()), lib[0] if lib else "-",
            ms(lib[1]["median_ns"]) if lib else "-", p.winner, fmt_ratio(r), target))
    out.append("")
    return above, failed


def fused_table(out, problems):
    out.append("## Fused epilogues (template fused vs the best library GEMM + separate epilogue)\n")
    out.append("| shape | epilogue | best template | template ms | best library + separate "
               "| ms | best cuBLASLt fused | pick | library / template | target |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    failed = []
    for p in (q for q in problems if q.group == "fused"):
        if p.error:
            out.append("| %s | %s | %s | | | | | | - | FAIL |" % (p.shape, p.epilogue, p.error))
            failed.append("%s %s" % (p.shape, p.epilogue))
            continue
        cell, t_ns = template_cell(p)
        pair, lt = p.best("pair"), p.best("library")
        # The library side: the faster of the pairs and cuBLASLt's own fused epilogue.
        lib_ns = min(x[1]["median_ns"] for x in (pair, lt) if x) if (pair or lt) else None
        r = ratio(lib_ns, t_ns)
        pick_is_template = classify(p.winner) == "template"
        ok = pick_is_template and r is not None and r >= FUSED_MARGIN
        if not ok:
            failed.append("%s %s" % (p.shape, p.epilogue))
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s%s |" % (
            p.shape, p.epilogue, cell, ms(t_ns), pair[0] if pair else "-",
            ms(pair[1]["median_ns"]) if pair else "-",
            "%s (%s)" % (lt[0], ms(lt[1]["median_ns"])) if lt else "-", p.winner,
            fmt_ratio(r), verdict(ok), "" if pick_is_template else " (pick is not a template)"))
    out.append("")
    return failed


def inductor_table(out, problems, inductor):
    out.append("## Inductor's fused kernels vs ktune's fused pick\n")
    out.append("| shape | epilogue | Inductor ms | eager ms | ktune pick | ktune ms "
               "| Inductor / ktune | target |")
    out.append("|---|---|---|---|---|---|---|---|")
    failed, ran = [], 0
    for p in (q for q in problems if q.group == "fused"):
        row = inductor.get((p.shape, p.epilogue.replace(",", "_")))
        if row is None:
            out.append("| %s | %s | not run | | | | - | - |" % (p.shape, p.epilogue))
            continue
        ran += 1
        if "error" in row or p.error:
            why = row.get("error") or p.error
            out.append("| %s | %s | %s | | | | - | FAIL |" % (p.shape, p.epilogue, why))
            failed.append("%s %s" % (p.shape, p.epilogue))
            continue
        ind_ns = row["inductor_ms"] * 1e6
        r = ratio(ind_ns, p.pick_ns())
        ok = r is not None and r >= 1.0
        if not ok:
            failed.append("%s %s" % (p.shape, p.epilogue))
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            p.shape, p.epilogue, ms(ind_ns), ms(row["eager_cublas_ms"] * 1e6), p.winner,
            ms(p.pick_ns()), fmt_ratio(r), verdict(ok)))
    out.append("")
    return failed, ran


def summary(outdir):
    problems = read_problems(outdir)
    inductor = read_inductor(outdir)
    body = []
    above, plain_failed = plain_tables(body, problems, "plain", "Plain bf16", PLAIN_MIN,
                                       PLAIN_MIN_SHAPES)
    _, unaligned_failed = plain_tables(body, problems, "unaligned", "Unaligned bf16 (N or K odd "
                                       "or not a multiple of 8)", UNALIGNED_MIN, None)
    fused_failed = fused_table(body, problems)
    inductor_failed, inductor_ran = inductor_table(body, problems, inductor)
    has = lambda g: any(p.group == g for p in problems)
    targets = [
        ("Plain: best template >= 90% of cuBLAS at 4096^3 and 8192^3",
         has("plain") and not plain_failed, ", ".join(plain_failed)),
        ("Plain: at or above cuBLAS on >= %d shapes" % AT_OR_ABOVE_SHAPES,
         len(above) >= AT_OR_ABOVE_SHAPES, "%d: %s" % (len(above), ", ".join(above) or "none")),
        ("Unaligned: best template >= 80% of cuBLAS", has("unaligned") and not unaligned_failed,
         ", ".join(unaligned_failed)),
        ("Fused: a template is the pick and beats the best library + separate by >= 10%",
         has("fused") and not fused_failed, ", ".join(fused_failed)),
        ("Inductor's fused kernels never faster than ktune's fused pick",
         inductor_ran > 0 and not inductor_failed,
         ", ".join(inductor_failed) if inductor_ran
         else "Inductor did not run (run.txt, inductor-templates.err)"),
    ]
    out = ["# Issue 21 targets\n", "| target | result | failing / note |", "|---|---|---|"]
    out += ["| %s | %s | %s |" % (t, verdict(ok), note) for t, ok, note in targets]
    out.append("")
    out.append("Times are medians per call (`ktune gemm --json-log`); throughput ratios are time "
               "ratios inverted (cuBLAS ms / template ms). `ktune gemm` took %.1f s of wall time "
               "over %d problems (each in problems.tsv)." % (
                   sum(p.wall_ms for p in problems) / 1e3, len(problems)))
    out.append("")
    return "\n".join(out + body), all(ok for _, ok, _ in targets)


def check():
    """The parser against the saved sample: its expected verdicts, so a parser change that
    misreads the logs fails here."""
    sample = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates_sample")
    text, all_pass = summary(sample)
    with open(os.path.join(sample, "expected.md")) as f:
        expected = f.read()
    if text != expected:
        sys.stdout.write(text)
        sys.stderr.write("templates_summary --check: the sample's summary differs from "
                         "templates_sample/expected.md (above)\n")
        return 1
    if all_pass:
        sys.stderr.write("templates_summary --check: the sample has failing targets on purpose, "
                         "yet every target passed\n")
        return 1
    print("templates_summary --check: ok")
    return 0


def main(argv):
    if argv in (["-h"], ["--help"]):
        sys.stdout.write(__doc__)
        return 0
    if argv == ["--check"]:
        return check()
    if len(argv) != 1:
        sys.stderr.write(__doc__)
        return 2
    text, _ = summary(argv[0])
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
