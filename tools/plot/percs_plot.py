# SPDX-License-Identifier: GPL-2.0
"""percs_plot: the benchmarks' PNG plots, drawn by gnuplot.

One plotter for the benchmark scripts (percs-msg-bench, peers-report):
data files in a scratch directory, a gnuplot script, and a check that
the PNG was written.  Each script keeps its own gnuplot commands.
"""
import os
import shutil
import subprocess
import sys
import tempfile


class Plot:
    """A gnuplot run: add data files with data(), then render(script)."""

    def __init__(self, tool):
        if not shutil.which("gnuplot"):
            sys.exit(f"{tool}: a plot needs gnuplot (Debian: gnuplot-nox)")
        self.tool = tool
        self.dir = tempfile.mkdtemp()

    def data(self, name, rows):
        """Write rows (tuples) one per line, space separated; a string
        with spaces is quoted.  Returns the file's path for the script."""
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            for r in rows:
                f.write(" ".join(f'"{x}"' if isinstance(x, str) else str(x)
                                 for x in r) + "\n")
        return path

    def render(self, script, path):
        """Run script (which must set output to path); exit on failure."""
        r = subprocess.run(["gnuplot"], input=script, text=True,
                           capture_output=True)
        shutil.rmtree(self.dir)
        if r.returncode or not os.path.exists(path):
            sys.exit(f"{self.tool}: gnuplot failed: " + r.stderr.strip())
        print(f"{self.tool}: plot written to {path}", file=sys.stderr)
