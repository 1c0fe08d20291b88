#!/usr/bin/python3
"""A co-runner for the contention benchmarks: keeps one CPU busy the given
fraction of every 10 ms (1: all the time) until it is killed.

    /usr/bin/python3 perf/spin.py 0.25
"""
import sys
import time

duty, period = float(sys.argv[1]), 0.01
while True:
    t = time.perf_counter()
    while time.perf_counter() - t < duty * period:
        pass
    if duty < 1:
        time.sleep((1 - duty) * period)
