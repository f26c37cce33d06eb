"""golden's headless part (everything in `builder`) never loads the review UI: each of its
modules, imported in a fresh interpreter, leaves `textual` and `review_tui` out of
`sys.modules`. (The import contracts in pyproject.toml check the same statically, run by
`lint-imports` in .ci/run; this checks what really gets loaded, lazy imports included.)"""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = r"""
import importlib, json, pkgutil, sys
import builder
loaded = {}
for info in pkgutil.walk_packages(builder.__path__, "builder."):
    importlib.import_module(info.name)
    loaded[info.name] = sorted(m for m in ("textual", "review_tui") if m in sys.modules)
    if loaded[info.name]:
        break  # the first module that pulled the UI in is the one to name
print(json.dumps(loaded))
"""


def test_every_builder_module_imports_without_the_ui():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         check=True).stdout
    loaded = json.loads(out)
    assert {name: ui for name, ui in loaded.items() if ui} == {}
    assert len(loaded) > 50 and "builder.generate.runner" in loaded and "builder.cli" in loaded
