"""The training example runs and draws its learning curve."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_training_example_saves_a_learning_curve(tmp_path):
    png = tmp_path / "curve.png"
    out = subprocess.run(
        [
            sys.executable,
            str(EXAMPLES / "train_vs_easy.py"),
            "--minutes",
            "0.05",
            "--every",
            "20",
            "--eval-hands",
            "10",
            "--plot",
            str(png),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "evaluation hands" in out.stdout and "saved the learning curve" in out.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
