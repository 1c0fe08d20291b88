"""frameworks/common on the path, as worker.py puts it for the engines."""
from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMON = os.path.join(ROOT, "frameworks", "common")
sys.path.insert(0, COMMON)
os.environ.setdefault("KERAS_BACKEND", "jax")  # as the jax engine runs it
