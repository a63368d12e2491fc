#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""coverage-cover.py - the cheapest programs that run every function.

Reads the DIR/cov/NAME files func-coverage.sh wrote (the percs.ko
functions each selftest program ran) and picks, greedily, the programs
with the most not-yet-run functions per second until every function some
program runs is run by a chosen one, then drops any that later choices
made useless; programs named with --keep are
chosen first whatever they add (they are there for something function
counts do not show, such as fault injection).  Seconds per program come
from a WEIGHTS file ("NAME SECONDS" lines, e.g. one debug kernel's pass
from a make check log) or else from DIR/cov/NAME.time.

Usage: coverage-cover.py DIR [--weights FILE] [--keep NAME ...]
       [--only NAME ...]
"""
import argparse
import os
import sys


def load(cov, only):
    funcs, secs = {}, {}
    for entry in sorted(os.listdir(cov)):
        if '.' in entry or (only and entry not in only):
            continue
        with open(os.path.join(cov, entry)) as f:
            funcs[entry] = {line.split()[1] for line in f if line.strip()}
        try:
            with open(os.path.join(cov, entry + '.time')) as f:
                secs[entry] = float(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            secs[entry] = 1.0
    return funcs, secs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('dir')
    ap.add_argument('--weights')
    ap.add_argument('--keep', nargs='*', default=[])
    ap.add_argument('--only', nargs='*', default=[])
    args = ap.parse_args()
    cov = os.path.join(args.dir, 'cov')
    if not os.path.isdir(cov):
        sys.exit(f'coverage-cover: {cov}: no such directory')
    funcs, secs = load(cov, set(args.only))
    if not funcs:
        sys.exit(f'coverage-cover: no program files in {cov}')
    if args.weights:
        with open(args.weights) as f:
            for line in f:
                word = line.split()
                if len(word) >= 2 and word[0] in secs:
                    secs[word[0]] = max(float(word[1]), 1.0)
    for name in args.keep:
        if name not in funcs:
            sys.exit(f'coverage-cover: --keep {name}: no such program')
    union = set().union(*funcs.values())
    owners = {}
    for name, fs in funcs.items():
        for fn in fs:
            owners.setdefault(fn, []).append(name)
    chosen, covered = [], set()

    def take(name):
        new = funcs[name] - covered
        covered.update(new)
        chosen.append((name, len(new)))

    for name in args.keep:
        take(name)
    while covered != union:
        best = max((n for n in funcs if n not in dict(chosen)),
                   key=lambda n: (len(funcs[n] - covered) / secs[n], -secs[n]))
        take(best)
    # Greedy can take a program that later ones make useless: drop those,
    # dearest first, then count what each adds in the order taken.
    names = [n for n, _ in chosen]
    for name in sorted(names, key=lambda n: -secs[n]):
        if name in args.keep:
            continue
        rest = [n for n in names if n != name]
        if set().union(*(funcs[n] for n in rest)) == union:
            names = rest
    chosen, covered = [], set()
    for name in names:
        take(name)
    total = sum(secs.values())
    cost = sum(secs[n] for n, _ in chosen)
    print(f'{len(union)} functions run by {len(funcs)} programs '
          f'({total:.0f} s); {len(chosen)} programs run them all '
          f'({cost:.0f} s):')
    for name, new in chosen:
        print(f'  {name:14s} {secs[name]:6.0f} s  {len(funcs[name]):4d} '
              f'functions, {new:4d} new')
    left = sorted(set(funcs) - {n for n, _ in chosen})
    print('left out: ' + ' '.join(left))
    only = {n: sorted(fn for fn in funcs[n] if owners[fn] == [n])
            for n in funcs}
    for name in sorted(only):
        if only[name]:
            print(f'only {name}: ' + ' '.join(only[name]))


if __name__ == '__main__':
    main()
